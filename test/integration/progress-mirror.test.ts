import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { MESSAGE_PROGRESS_UNKNOWN } from '../../api/messages.js';
import { CriClient } from '../../daemon/cri/client.js';
import { nodeImages, privateContainerd, startDaemon, tagStatus, type InProcessDaemon } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient } from '../helpers/kube.js';
import { ThrottleProxy } from '../helpers/throttle.js';
import { TlsProxy } from '../helpers/tls-proxy.js';

// Byte progress when containerd pulls through a registry mirror (its config_path hosts.toml), over
// plain HTTP and over TLS with a private CA: a real containerd pulls names that resolve nowhere but
// through the mirror (a throttled proxy of the test registry), and the real daemon code reads the
// same hosts.toml. Without it, the status says progress is unknown instead of showing 0 %.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
let ns = '';
let ctrd: ReturnType<typeof privateContainerd>;
let cri: CriClient;
let slow: ThrottleProxy;
let tls: TlsProxy;
const running: InProcessDaemon[] = [];
const created: string[] = [];

const httpMirrored = 'mirrored.kruise-ts.test';
const tlsMirrored = 'tls-mirrored.kruise-ts.test';

beforeAll(async () => {
  ns = await createNamespace(rest, 'mirror');
  ctrd = privateContainerd('mirror');
  cri = new CriClient(ctrd.socket);
  // 52 MB at 8 MB/s: long enough to see progress move.
  slow = await ThrottleProxy.start(env.registryOpen, 8_000_000);
  tls = await TlsProxy.start(slow.address);
  // containerd reads a registry's hosts.toml at each pull: written now, used by the pulls below.
  const hostsDir = (registry: string): string => {
    const d = join(ctrd.dir, 'certs.d', registry);
    mkdirSync(d, { recursive: true });
    return d;
  };
  writeFileSync(join(hostsDir(httpMirrored), 'hosts.toml'), `server = "https://${httpMirrored}"\n[host."http://${slow.address}"]\n  capabilities = ["pull", "resolve"]\n`);
  const tlsDir = hostsDir(tlsMirrored);
  writeFileSync(join(tlsDir, 'mirror-ca.pem'), tls.caCert);
  writeFileSync(join(tlsDir, 'hosts.toml'), `server = "https://${tlsMirrored}"\n[host."https://${tls.address}"]\n  capabilities = ["pull", "resolve"]\n  ca = "${join(tlsDir, 'mirror-ca.pem')}"\n`);
});
afterAll(async () => {
  for (const d of running) await d.stop();
  for (const n of created) await nis.delete(undefined, n).catch(() => undefined);
  await tls.stop();
  await slow.stop();
  cri.close();
  ctrd.ctl('down');
  await deleteNamespace(rest, ns);
});

let seq = 0;
async function pullOn(image: string, withHosts: boolean): Promise<string> {
  const name = `${ns}-${seq++}`;
  running.push(startDaemon(name, rest, ctrd.socket, { secretNamespace: ns, ...(withHosts ? { registryConfigPath: [join(ctrd.dir, 'certs.d')] } : {}) }));
  // The same image under every name: its layers must be downloaded again for progress to move.
  for (const registry of [httpMirrored, tlsMirrored]) await cri.image('RemoveImage', { image: { image: `${registry}/big:1.0` } });
  await nis.create({
    metadata: { name, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } },
    spec: { images: { [image]: { tags: [{ tag: '1.0', version: 0, createdAt: new Date().toISOString(), imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 120, backoffLimit: 1, ttlSecondsAfterFinished: 300 } }] } } },
  });
  created.push(name);
  return name;
}

/** Polls the tag until it finishes; returns every progress and message seen while it was Pulling. */
async function watch(name: string, image: string): Promise<{ progress: number[]; messages: string[]; final: ReturnType<typeof tagStatus> }> {
  const progress: number[] = [];
  const messages: string[] = [];
  const final = await eventually(
    async () => {
      const s = tagStatus(await nis.get(undefined, name), image, '1.0');
      if (s?.phase === 'Pulling') {
        progress.push(s.progress ?? 0);
        if (s.message) messages.push(s.message);
      }
      if (s?.phase !== 'Succeeded' && s?.phase !== 'Failed') throw new Error(`not finished: ${JSON.stringify(s)}`);
      return s;
    },
    90_000,
    200,
  );
  return { progress, messages, final };
}

describe('byte progress behind a registry mirror', () => {
  it.each([
    ['an HTTP mirror', httpMirrored],
    ['a TLS mirror with a private CA', tlsMirrored],
  ])('moves through %s that containerd pulls from', async (_what, registry) => {
    const image = `${registry}/big`;
    const name = await pullOn(image, true);
    const seen = await watch(name, image);
    expect(seen.final).toMatchObject({ phase: 'Succeeded', progress: 100 });
    expect(new Set(seen.progress.filter((p) => p > 0 && p < 100)).size).toBeGreaterThanOrEqual(2);
    expect(seen.messages).toEqual([]);
    expect((await cri.image('ImageStatus', { image: { image: `${image}:1.0` } })).image?.id).toBeTruthy();
  });

  it('says progress is unknown, with why, when the daemon cannot read the mirror configuration', async () => {
    const image = `${httpMirrored}/big`;
    const name = await pullOn(image, false);
    const seen = await watch(name, image);
    expect(seen.final).toMatchObject({ phase: 'Succeeded', progress: 100 });
    expect(seen.final?.message).toBeUndefined();
    expect(seen.progress.every((p) => p === 0)).toBe(true);
    expect(seen.messages.length).toBeGreaterThan(0);
    // The name resolves nowhere (how fast depends on the machine's resolver): the reason names the host.
    expect(seen.messages[0]?.startsWith(`${MESSAGE_PROGRESS_UNKNOWN}: `)).toBe(true);
    expect(seen.messages[0]).toContain(httpMirrored);
  });
});
