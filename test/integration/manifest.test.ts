import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { RegistryAuth } from '../../daemon/imagepuller/credentials.js';
import { fetchImageLayers, type ImageLayers } from '../../daemon/imagepuller/manifest.js';
import { parseHostsToml, type RegistryEndpoint } from '../../daemon/imagepuller/registryhosts.js';
import { TlsProxy } from '../helpers/tls-proxy.js';
import { registryDigest, testEnv } from '../helpers/env.js';

const env = testEnv();
const open = env.registryOpen;
const right: RegistryAuth = { username: env.registryUser, password: env.registryPassword };
const wrong: RegistryAuth = { username: env.registryUser, password: 'not-the-password' };
const ociIndex = 'application/vnd.oci.image.index.v1+json';
const dockerList = 'application/vnd.docker.distribution.manifest.list.v2+json';
const manifestTypes = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof Error) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

/** The registry's own view of a manifest, read without the code under test. */
async function rawManifest(repo: string, ref: string): Promise<{ mediaType: string; size: number; digest: string; doc: { layers: Array<{ digest: string; size: number }> } }> {
  const res = await fetch(`http://${open}/v2/${repo}/manifests/${ref}`, { headers: { Accept: manifestTypes } });
  if (!res.ok) throw new Error(`GET ${repo}:${ref}: HTTP ${res.status}`);
  const body = Buffer.from(await res.arrayBuffer());
  return {
    mediaType: res.headers.get('content-type') ?? '',
    size: body.length,
    digest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
    doc: JSON.parse(body.toString('utf8')) as { layers: Array<{ digest: string; size: number }> },
  };
}

async function blobSize(repo: string, digest: string): Promise<number> {
  const res = await fetch(`http://${open}/v2/${repo}/blobs/${digest}`, { method: 'HEAD' });
  return Number(res.headers.get('content-length'));
}

async function listen(server: Server, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

function expectSane(result: ImageLayers): void {
  expect(result.manifestDigest).toMatch(/^sha256:[a-f0-9]{64}$/);
  expect(result.configDigest).toMatch(/^sha256:[a-f0-9]{64}$/);
  for (const layer of result.layers) expect(layer.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
  expect(result.totalBytes).toBe(result.layers.reduce((sum, l) => sum + l.size, 0));
}

describe('fetchImageLayers against the open registry', () => {
  it('reads an image by tag with the digest the registry serves', async () => {
    const result = await fetchImageLayers(`${open}/busybox:1.0`, []);
    expectSane(result);
    expect(result.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.0'));
    expect(result.layers).toHaveLength(1);
    expect(result.layers[0]?.size).toBe(await blobSize('busybox', result.layers[0]?.digest ?? ''));
    const latest = await fetchImageLayers(`${open}/busybox`, []);
    expect(latest).toEqual(result);
    // "localhost" is a loopback registry too: plain HTTP.
    const port = open.split(':')[1] ?? '';
    expect(await fetchImageLayers(`localhost:${port}/busybox:1.0`, [])).toEqual(result);
  });

  it('reads an image by digest, also when a tag is given too', async () => {
    const digest = await registryDigest(open, 'busybox', '1.1');
    const byTag = await fetchImageLayers(`${open}/busybox:1.1`, []);
    const byDigest = await fetchImageLayers(`${open}/busybox@${digest}`, []);
    expect(byDigest).toEqual(byTag);
    expect(byDigest.manifestDigest).toBe(digest);
    expect(await fetchImageLayers(`${open}/busybox:1.0@${digest}`, [])).toEqual(byTag);
  });

  it('lists every layer with its real size', async () => {
    const small = await fetchImageLayers(`${open}/busybox:1.1`, []);
    expect(small.layers).toHaveLength(2);
    const big = await fetchImageLayers(`${open}/big:1.0`, []);
    expectSane(big);
    expect(big.layers).toHaveLength(2);
    expect(big.totalBytes).toBeGreaterThan(50 * 1024 * 1024);
    expect(big.layers[0]).toEqual(small.layers[0]);
    for (const layer of big.layers) expect(layer.size).toBe(await blobSize('big', layer.digest));
    const raw = await rawManifest('big', '1.0');
    expect(big.layers).toEqual(raw.doc.layers.map(({ digest, size }) => ({ digest, size })));
    const many = await fetchImageLayers(`${open}/many-042:1.0`, []);
    expect(many.manifestDigest).toBe(await registryDigest(open, 'many-042', '1.0'));
  });

  it('ignores credentials the registry does not ask for', async () => {
    const result = await fetchImageLayers(`${open}/busybox:1.0`, [wrong]);
    expect(result.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.0'));
  });

  it('reports a missing tag and a missing repository with the 404', async () => {
    const tag = await rejection(fetchImageLayers(`${open}/busybox:does-not-exist`, []));
    expect(tag.message).toBe(
      `manifest busybox:does-not-exist not found in registry ${open}: HTTP 404 Not Found (MANIFEST_UNKNOWN: manifest unknown)`,
    );
    const repo = await rejection(fetchImageLayers(`${open}/no/such/repo:1.0`, []));
    expect(repo.message).toMatch(new RegExp(`^manifest no/such/repo:1\\.0 not found in registry ${open}: HTTP 404 Not Found \\((NAME|MANIFEST)_UNKNOWN`));
    const digest = 'sha256:' + '0'.repeat(64);
    const byDigest = await rejection(fetchImageLayers(`${open}/busybox@${digest}`, []));
    expect(byDigest.message).toMatch(new RegExp(`^manifest busybox@${digest} not found in registry ${open}: HTTP 404`));
  });
});

describe('fetchImageLayers against the htpasswd registry', () => {
  const image = `${env.registryAuth}/private/busybox:1.0`;

  it('reads a private image with the right credentials', async () => {
    const result = await fetchImageLayers(image, [right]);
    expectSane(result);
    expect(result.manifestDigest).toBe(await registryDigest(env.registryAuth, 'private/busybox', '1.0', `${right.username}:${right.password}`));
    expect(result.layers).toHaveLength(2);
  });

  it('tries credentials in order until one works', async () => {
    const result = await fetchImageLayers(image, [wrong, { username: 'nobody', password: 'x' }, right]);
    expect(result).toEqual(await fetchImageLayers(image, [right]));
  });

  it('reports refused credentials with the 401, without the password', async () => {
    const err = await rejection(fetchImageLayers(image, [wrong, { username: 'nobody', password: 'also-wrong' }]));
    expect(err.message).toBe(
      `registry ${env.registryAuth} refused the credentials (2 tried) for repository private/busybox: HTTP 401 Unauthorized (UNAUTHORIZED: authentication required)`,
    );
    expect(err.message).not.toContain(wrong.password);
    expect(err.message).not.toContain(Buffer.from(`${wrong.username}:${wrong.password}`).toString('base64'));
  });

  it('reports missing credentials with the 401', async () => {
    const err = await rejection(fetchImageLayers(image, []));
    expect(err.message).toBe(
      `registry ${env.registryAuth} requires credentials and none were given for repository private/busybox: HTTP 401 Unauthorized (UNAUTHORIZED: authentication required)`,
    );
  });
});

describe('fetchImageLayers when the registry cannot answer', () => {
  it('reports an unreachable registry', async () => {
    const err = await rejection(fetchImageLayers('127.0.0.1:1/busybox:1.0', []));
    expect(err.message).toBe('cannot connect to registry 127.0.0.1:1 (http): ECONNREFUSED');
  });

  describe('with a registry that never answers', () => {
    const silent = createServer(() => undefined);
    let host = '';
    beforeAll(async () => {
      host = `127.0.0.1:${await listen(silent)}`;
    });
    afterAll(() => close(silent));

    it('honours the timeout', async () => {
      const started = Date.now();
      const err = await rejection(fetchImageLayers(`${host}/busybox:1.0`, [], { timeoutMs: 300 }));
      expect(err.message).toBe(`http request to ${host} for busybox timed out after 300 ms`);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('honours the abort signal', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('job deleted')), 100);
      const started = Date.now();
      const err = await rejection(fetchImageLayers(`${host}/busybox:1.0`, [], { signal: controller.signal }));
      expect(err.message).toBe(`http request to ${host} for busybox was aborted`);
      expect(Date.now() - started).toBeLessThan(3000);
      const already = await rejection(fetchImageLayers(`${host}/busybox:1.0`, [], { signal: AbortSignal.abort() }));
      expect(already.message).toMatch(/was aborted$/);
    });
  });
});

describe('fetchImageLayers with a multi-platform index', () => {
  let amd64: Awaited<ReturnType<typeof rawManifest>>;
  let arm64: Awaited<ReturnType<typeof rawManifest>>;

  async function pushIndex(tag: string, mediaType: string): Promise<string> {
    const entry = (m: typeof amd64, platform: Record<string, string>): object => ({ mediaType: m.mediaType, digest: m.digest, size: m.size, platform });
    const body = JSON.stringify({
      schemaVersion: 2,
      mediaType,
      manifests: [
        entry(amd64, { os: 'linux', architecture: 'amd64' }),
        entry(arm64, { os: 'linux', architecture: 'arm64', variant: 'v8' }),
        // Where buildkit puts attestations: an entry no real platform selects.
        entry(amd64, { os: 'unknown', architecture: 'unknown' }),
      ],
    });
    const res = await fetch(`http://${open}/v2/busybox/manifests/${tag}`, { method: 'PUT', headers: { 'Content-Type': mediaType }, body });
    if (res.status !== 201) throw new Error(`PUT index ${tag}: HTTP ${res.status} ${await res.text()}`);
    return `sha256:${createHash('sha256').update(body).digest('hex')}`;
  }

  beforeAll(async () => {
    amd64 = await rawManifest('busybox', '1.0');
    arm64 = await rawManifest('busybox', '1.1');
    await pushIndex('multiarch-oci', ociIndex);
    await pushIndex('multiarch-docker', dockerList);
  });

  it.each(['multiarch-oci', 'multiarch-docker'])('picks the manifest of the requested platform from %s', async (tag) => {
    const image = `${open}/busybox:${tag}`;
    const amd = await fetchImageLayers(image, [], { platform: { os: 'linux', architecture: 'amd64' } });
    expect(amd.manifestDigest).toBe(amd64.digest);
    expect(amd.layers).toHaveLength(1);
    const arm = await fetchImageLayers(image, [], { platform: { os: 'linux', architecture: 'arm64' } });
    expect(arm.manifestDigest).toBe(arm64.digest);
    expect(arm.layers).toHaveLength(2);
    // containerd's rule: arm64 without a variant is arm64/v8.
    const armV8 = await fetchImageLayers(image, [], { platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } });
    expect(armV8).toEqual(arm);
  });

  it("defaults to linux and this machine's architecture", async () => {
    const arch = ({ x64: 'amd64', arm64: 'arm64' } as Record<string, string>)[process.arch];
    const expected = arch === 'amd64' ? amd64.digest : arm64.digest;
    if (arch === undefined) {
      await expect(fetchImageLayers(`${open}/busybox:multiarch-oci`, [])).rejects.toThrow(/no manifest for platform/);
    } else {
      expect((await fetchImageLayers(`${open}/busybox:multiarch-oci`, [])).manifestDigest).toBe(expected);
    }
  });

  it('reads an index by digest', async () => {
    const digest = await pushIndex('multiarch-oci', ociIndex);
    const result = await fetchImageLayers(`${open}/busybox@${digest}`, [], { platform: { os: 'linux', architecture: 'arm64' } });
    expect(result.manifestDigest).toBe(arm64.digest);
  });

  it('names the available platforms when none fits', async () => {
    const image = `${open}/busybox:multiarch-oci`;
    const err = await rejection(fetchImageLayers(image, [], { platform: { os: 'linux', architecture: 's390x' } }));
    expect(err.message).toBe(
      `registry ${open}: no manifest for platform linux/s390x in the index of busybox (available: linux/amd64, linux/arm64/v8, unknown/unknown)`,
    );
    const variant = await rejection(fetchImageLayers(image, [], { platform: { os: 'linux', architecture: 'arm64', variant: 'v9' } }));
    expect(variant.message).toMatch(/no manifest for platform linux\/arm64\/v9 /);
  });
});

/**
 * A registry with Docker Hub-style token auth in front of the open registry: manifests need a
 * bearer token, which its /token endpoint issues (only for `user`, when one is set).
 */
class TokenRegistry {
  readonly server = createServer((req, res) => void this.handle(req, res));
  readonly tokenRequests: Array<{ authorization: string | undefined; scope: string | null }> = [];
  manifestRequests = 0;
  private readonly tokens = new Set<string>();
  private issued = 0;

  constructor(
    private readonly user: RegistryAuth | undefined,
    private readonly tokenField: 'token' | 'access_token',
  ) {}

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (url.pathname === '/token') return this.token(req, res, url);
    const match = url.pathname.match(/^\/v2\/(.+)\/manifests\/([^/]+)$/);
    if (!match) return void res.writeHead(404).end();
    const [, repo, ref] = match;
    const auth = req.headers.authorization ?? '';
    if (!this.tokens.has(auth.replace(/^Bearer /, ''))) {
      const challenge = `Bearer realm="http://${req.headers.host}/token",service="kruise-ts-test",scope="repository:${repo}:pull"`;
      return void res.writeHead(401, { 'WWW-Authenticate': challenge, 'Content-Type': 'application/json' }).end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
    }
    this.manifestRequests++;
    const upstream = await fetch(`http://${open}/v2/${repo}/manifests/${ref}`, { headers: { Accept: req.headers.accept ?? '' } });
    const headers: Record<string, string> = { 'Content-Type': upstream.headers.get('content-type') ?? '' };
    const digest = upstream.headers.get('docker-content-digest');
    if (digest) headers['Docker-Content-Digest'] = digest;
    res.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()));
  }

  private token(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const authorization = req.headers.authorization;
    this.tokenRequests.push({ authorization, scope: url.searchParams.get('scope') });
    const expected = this.user && `Basic ${Buffer.from(`${this.user.username}:${this.user.password}`).toString('base64')}`;
    if (url.searchParams.get('service') !== 'kruise-ts-test' || (expected !== undefined && authorization !== expected)) {
      return void res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"details":"incorrect username or password"}');
    }
    const token = `token-${++this.issued}`;
    this.tokens.add(token);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ [this.tokenField]: token, expires_in: 300 }));
  }
}

describe('fetchImageLayers with bearer token auth', () => {
  const anonymous = new TokenRegistry(undefined, 'token');
  const private_ = new TokenRegistry(right, 'access_token');
  let anonymousHost = '';
  let privateHost = '';
  beforeAll(async () => {
    anonymousHost = `127.0.0.1:${await listen(anonymous.server)}`;
    privateHost = `127.0.0.1:${await listen(private_.server)}`;
  });
  afterAll(async () => {
    await close(anonymous.server);
    await close(private_.server);
  });

  it('gets an anonymous token when no credentials are given', async () => {
    const result = await fetchImageLayers(`${anonymousHost}/busybox:1.0`, []);
    expect(result.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.0'));
    expect(anonymous.tokenRequests).toEqual([{ authorization: undefined, scope: 'repository:busybox:pull' }]);
  });

  it('reuses the token for the platform manifest of an index', async () => {
    anonymous.tokenRequests.length = 0;
    anonymous.manifestRequests = 0;
    await fetchImageLayers(`${anonymousHost}/busybox:multiarch-oci`, [], { platform: { os: 'linux', architecture: 'arm64' } });
    expect(anonymous.tokenRequests).toHaveLength(1);
    expect(anonymous.manifestRequests).toBe(2);
  });

  it('asks for a token with each credential in order until one is accepted (access_token field)', async () => {
    const result = await fetchImageLayers(`${privateHost}/busybox:1.1`, [wrong, right]);
    expect(result.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.1'));
    expect(private_.tokenRequests.map((r) => r.authorization)).toEqual([
      `Basic ${Buffer.from(`${wrong.username}:${wrong.password}`).toString('base64')}`,
      `Basic ${Buffer.from(`${right.username}:${right.password}`).toString('base64')}`,
    ]);
  });

  it('reports refused and missing credentials', async () => {
    const refused = await rejection(fetchImageLayers(`${privateHost}/busybox:1.0`, [wrong]));
    expect(refused.message).toBe(
      `registry ${privateHost} refused the credentials (1 tried) for repository busybox: HTTP 401 Unauthorized (UNAUTHORIZED: authentication required)`,
    );
    expect(refused.message).not.toContain(wrong.password);
    const missing = await rejection(fetchImageLayers(`${privateHost}/busybox:1.0`, []));
    expect(missing.message).toMatch(new RegExp(`^registry ${privateHost} requires credentials and none were given for repository busybox: HTTP 401`));
  });

  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

  // Needs a non-loopback address: loopback registries are spoken to over plain HTTP from the start.
  it('falls back to plain HTTP when HTTPS cannot connect, but never sends credentials there', async () => {
    if (!lanAddress) throw new Error('this test needs a non-loopback IPv4 address on the machine');
    const registry = new TokenRegistry(undefined, 'token');
    let tlsHellos = 0;
    // A TLS ClientHello is not HTTP: it ends up here, which proves HTTPS was tried first.
    registry.server.on('clientError', (_err, socket) => {
      tlsHellos++;
      socket.destroy();
    });
    const host = `${lanAddress}:${await listen(registry.server, '0.0.0.0')}`;
    try {
      const result = await fetchImageLayers(`${host}/busybox:1.0`, []);
      expect(result.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.0'));
      expect(tlsHellos).toBe(1);
      expect(registry.tokenRequests).toHaveLength(1);
      const withCreds = await rejection(fetchImageLayers(`${host}/busybox:1.0`, [{ username: 'u', password: 'secret-pw' }]));
      expect(withCreds.message).toContain(`not sending registry credentials over plain HTTP to ${host}`);
      expect(registry.tokenRequests).toHaveLength(1);
    } finally {
      await close(registry.server);
    }
  });
});

describe('fetchImageLayers through the hosts containerd is configured with (hosts.toml)', () => {
  const hosts = (toml: string, registry: string, ca = ''): RegistryEndpoint[] => parseHostsToml(toml, registry, () => ca);
  let tls: TlsProxy;
  beforeAll(async () => {
    tls = await TlsProxy.start(open);
  });
  afterAll(async () => {
    await tls.stop();
  });

  it('tries the hosts in order: a mirror that cannot connect, then the registry; reports every failure when none answers', async () => {
    const direct = await fetchImageLayers(`${open}/busybox:1.0`, []);
    const endpoints = hosts(`server = "http://${open}"\n[host."http://127.0.0.1:1"]\n`, open);
    expect(await fetchImageLayers(`${open}/busybox:1.0`, [], { endpoints })).toEqual(direct);
    const none = await rejection(fetchImageLayers(`${open}/busybox:1.0`, [], { endpoints: hosts(`server = "http://127.0.0.1:2"\n[host."http://127.0.0.1:1"]\n`, open) }));
    expect(none.message).toBe('cannot connect to registry 127.0.0.1:1 (http): ECONNREFUSED; cannot connect to registry 127.0.0.1:2 (http): ECONNREFUSED');
  });

  it('reads through a mirror with a private CA, refuses it without the CA, and skips verification only when told', async () => {
    const direct = await fetchImageLayers(`mirrored.kruise-ts.test/busybox:1.0`, [], { endpoints: hosts(`[host."http://${open}"]\n`, 'mirrored.kruise-ts.test') });
    expect(direct.manifestDigest).toBe(await registryDigest(open, 'busybox', '1.0'));
    const withCa = hosts(`server = "https://${tls.address}"\nca = "ca.pem"\n`, 'mirrored.kruise-ts.test', tls.caCert);
    expect(await fetchImageLayers('mirrored.kruise-ts.test/busybox:1.0', [], { endpoints: withCa })).toEqual(direct);
    const untrusted = await rejection(fetchImageLayers('mirrored.kruise-ts.test/busybox:1.0', [], { endpoints: hosts(`server = "https://${tls.address}"\n`, 'mirrored.kruise-ts.test') }));
    expect(untrusted.message).toBe(`cannot connect to registry ${tls.address} (https): UNABLE_TO_VERIFY_LEAF_SIGNATURE`);
    const skip = hosts(`server = "https://${tls.address}"\nskip_verify = true\n`, 'mirrored.kruise-ts.test');
    expect(await fetchImageLayers('mirrored.kruise-ts.test/busybox:1.0', [], { endpoints: skip })).toEqual(direct);
  });

  it("skips a host without the capability, and never sends a registry's credentials to a mirror", async () => {
    const image = `${env.registryAuth}/private/busybox:1.0`;
    const seen: Array<string | undefined> = [];
    // A mirror that asks for credentials: it must not get the ones meant for the registry.
    const mirror = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="mirror"' }).end();
    });
    const port = await listen(mirror);
    try {
      const endpoints = hosts(`server = "http://${env.registryAuth}"\n[host."http://127.0.0.1:1"]\n  capabilities = ["pull"]\n[host."http://127.0.0.1:${port}"]\n`, env.registryAuth);
      expect(await fetchImageLayers(image, [right], { endpoints })).toEqual(await fetchImageLayers(image, [right]));
      expect(seen).toEqual([undefined]);
    } finally {
      await close(mirror);
    }
  });
});
