import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHostsToml, registryHosts } from '../../daemon/imagepuller/registryhosts.js';

const noCa = (p: string): string => {
  throw new Error(`unexpected CA read: ${p}`);
};

describe('parseHostsToml (containerd hosts.toml)', () => {
  it('lists the hosts in the order written, then the server, with /v2 appended', () => {
    const eps = parseHostsToml(
      `server = "https://registry.example.com"
[host."https://mirror-a.example.com"]
  capabilities = ["pull", "resolve"]
[host."http://10.0.0.9:5000/prefix"]
  capabilities = ["pull"]
[host."https://mirror-c.example.com/v2"]
`,
      'registry.example.com',
      noCa,
    );
    expect(eps.map((e) => [e.base, [...e.capabilities].sort()])).toEqual([
      ['https://mirror-a.example.com/v2', ['pull', 'resolve']],
      ['http://10.0.0.9:5000/prefix/v2', ['pull']],
      ['https://mirror-c.example.com/v2', ['pull', 'push', 'resolve']],
      ['https://registry.example.com/v2', ['pull', 'push', 'resolve']],
    ]);
    expect(eps.every((e) => e.configured)).toBe(true);
  });

  it('keeps the path as written with override_path, and reads skip_verify, headers and CAs relative to the folder', () => {
    const read: string[] = [];
    const [mirror, server] = parseHostsToml(
      `[host."https://mirror.example.com/v1/proxy"]
  override_path = true
  skip_verify = true
  ca = ["a.pem", "/etc/certs/b.pem"]
  [host."https://mirror.example.com/v1/proxy".header]
    x-token = "abc"
    x-many = ["1", "2"]
`,
      'docker.io',
      (p) => {
        read.push(p);
        return `PEM ${p}`;
      },
    );
    expect(mirror).toMatchObject({ base: 'https://mirror.example.com/v1/proxy', host: 'mirror.example.com', skipVerify: true, ca: ['PEM a.pem', 'PEM /etc/certs/b.pem'], headers: { 'x-token': 'abc', 'x-many': '1, 2' } });
    expect(read).toEqual(['a.pem', '/etc/certs/b.pem']);
    // No server: Docker Hub's API host, and not a configured scheme (the loopback rule applies).
    expect(server).toMatchObject({ base: 'https://registry-1.docker.io/v2', configured: false });
  });

  it('applies top-level ca, skip_verify and capabilities to the server', () => {
    const eps = parseHostsToml('server = "https://r.example.com:8443"\nca = "r.pem"\nskip_verify = false\ncapabilities = ["resolve"]\n', 'r.example.com:8443', (p) => `PEM ${p}`);
    expect(eps).toHaveLength(1);
    expect(eps[0]).toMatchObject({ base: 'https://r.example.com:8443/v2', host: 'r.example.com:8443', ca: ['PEM r.pem'], skipVerify: false });
    expect([...(eps[0]?.capabilities ?? [])]).toEqual(['resolve']);
  });

  it('refuses what containerd would refuse, saying where', () => {
    expect(() => parseHostsToml('server = ', 'r', noCa)).toThrow(/invalid TOML/);
    expect(() => parseHostsToml('[host."ftp://m"]\n', 'r', noCa)).toThrow('host."ftp://m": "ftp://m" is neither http nor https');
    expect(() => parseHostsToml('[host."https://m"]\ncapabilities = ["fetch"]\n', 'r', noCa)).toThrow('host."https://m".capabilities: unknown fetch');
    expect(() => parseHostsToml('server = "https://r"\nca = 3\n', 'r', noCa)).toThrow('server.ca must be a string or a list of strings');
  });
});

describe('registryHosts (config_path folders)', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kts-hosts-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is the registry itself without a folder for it', () => {
    expect(registryHosts('quay.io', [join(dir, 'missing'), dir])).toEqual({ endpoints: [expect.objectContaining({ base: 'https://quay.io/v2', configured: false })] });
  });

  it('takes the first folder that has the registry, then _default; reads a relative CA from the folder and an absolute one under the host root', () => {
    const first = join(dir, 'containerd');
    const second = join(dir, 'docker');
    mkdirSync(join(first, '127.0.0.1:5000'), { recursive: true });
    mkdirSync(join(first, '_default'), { recursive: true });
    mkdirSync(join(second, '127.0.0.1:5000'), { recursive: true });
    mkdirSync(join(dir, 'host', 'etc'), { recursive: true });
    writeFileSync(join(first, '127.0.0.1:5000', 'hosts.toml'), 'server = "http://127.0.0.1:5000"\n[host."https://127.0.0.1:6000"]\n  ca = ["ca.pem", "/etc/other.pem"]\n');
    writeFileSync(join(first, '127.0.0.1:5000', 'ca.pem'), 'FIRST CA');
    writeFileSync(join(dir, 'host', 'etc', 'other.pem'), 'HOST CA');
    writeFileSync(join(second, '127.0.0.1:5000', 'hosts.toml'), 'server = "http://not-read"\n');
    writeFileSync(join(first, '_default', 'hosts.toml'), '[host."https://default-mirror"]\n');
    const got = registryHosts('127.0.0.1:5000', [first, second], join(dir, 'host'));
    expect(got.source).toBe(join(first, '127.0.0.1:5000', 'hosts.toml'));
    expect(got.endpoints.map((e) => [e.base, e.ca])).toEqual([
      ['https://127.0.0.1:6000/v2', ['FIRST CA', 'HOST CA']],
      ['http://127.0.0.1:5000/v2', []],
    ]);
    expect(registryHosts('ghcr.io', [first, second]).endpoints.map((e) => e.base)).toEqual(['https://default-mirror/v2', 'https://ghcr.io/v2']);
  });

  it("reads a Docker-style folder's *.crt files as CAs of the registry itself", () => {
    mkdirSync(join(dir, 'reg.example.com'));
    writeFileSync(join(dir, 'reg.example.com', 'ca.crt'), 'DOCKER CA');
    writeFileSync(join(dir, 'reg.example.com', 'client.cert'), 'not a CA');
    expect(registryHosts('reg.example.com', [dir]).endpoints).toEqual([expect.objectContaining({ base: 'https://reg.example.com/v2', ca: ['DOCKER CA'] })]);
  });

  it('names the file of a configuration it cannot read', () => {
    mkdirSync(join(dir, 'bad.example.com'));
    writeFileSync(join(dir, 'bad.example.com', 'hosts.toml'), '[host."https://m"]\n  ca = "missing.pem"\n');
    expect(() => registryHosts('bad.example.com', [dir])).toThrow(`${join(dir, 'bad.example.com', 'hosts.toml')}: ENOENT`);
  });
});
