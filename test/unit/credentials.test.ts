import { credentialsFor, CredentialError, parseDockerSecret, type KeyringEntry, type RegistryAuth } from '../../daemon/imagepuller/credentials.js';
import { InvalidReferenceError } from '../../api/image-reference.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const secretPassword = 'hunter2:TOP-secret';

function dockerConfigJson(auths: unknown, name = 'regcred'): Parameters<typeof parseDockerSecret>[0] {
  return {
    metadata: { namespace: 'kruise-daemon-config', name },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) },
  };
}

/** One keyring entry per key, each with its own username so the order of the result is visible. */
function keyring(...servers: string[]): KeyringEntry[] {
  return servers.map((server, i) => ({ server, auth: { username: `u${i}`, password: `p${i}` }, source: `ns/s${i}` }));
}

function users(auths: RegistryAuth[]): string[] {
  return auths.map((a) => a.username);
}

function credentialError(secret: Parameters<typeof parseDockerSecret>[0]): CredentialError {
  try {
    parseDockerSecret(secret);
  } catch (err) {
    if (err instanceof CredentialError) return err;
    throw err;
  }
  throw new Error('parseDockerSecret unexpectedly succeeded');
}

describe('parseDockerSecret', () => {
  it('reads username/password and auth entries of a dockerconfigjson secret in file order', () => {
    const secret = dockerConfigJson({
      'https://index.docker.io/v1/': { username: 'hubuser', password: 'hubpass', email: 'a@b.c' },
      'registry.example.com': { auth: b64('reguser:regpass') },
      'ghcr.io': { username: 'ignored', password: 'ignored', auth: b64('ghuser:ghpass') },
    });
    expect(parseDockerSecret(secret)).toEqual([
      { server: 'https://index.docker.io/v1/', auth: { username: 'hubuser', password: 'hubpass' }, source: 'kruise-daemon-config/regcred' },
      { server: 'registry.example.com', auth: { username: 'reguser', password: 'regpass' }, source: 'kruise-daemon-config/regcred' },
      { server: 'ghcr.io', auth: { username: 'ghuser', password: 'ghpass' }, source: 'kruise-daemon-config/regcred' },
    ]);
  });

  it('splits an auth field at the first colon: the password may contain colons', () => {
    const [entry] = parseDockerSecret(dockerConfigJson({ 'quay.io': { auth: b64(`robot+ci:${secretPassword}:x`) } }));
    expect(entry?.auth).toEqual({ username: 'robot+ci', password: `${secretPassword}:x` });
  });

  it('accepts an empty password and falls back to username/password when auth is empty', () => {
    const entries = parseDockerSecret(dockerConfigJson({ a: { auth: b64('user:') }, b: { auth: '', username: 'u', password: '' } }));
    expect(entries.map((e) => e.auth)).toEqual([
      { username: 'user', password: '' },
      { username: 'u', password: '' },
    ]);
  });

  it('reads a legacy dockercfg secret (no "auths" wrapper)', () => {
    const secret = {
      metadata: { namespace: 'ns', name: 'old' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'registry.example.com:5000': { auth: b64('old:pw'), email: 'x@y.z' } })) },
    };
    expect(parseDockerSecret(secret)).toEqual([{ server: 'registry.example.com:5000', auth: { username: 'old', password: 'pw' }, source: 'ns/old' }]);
  });

  it('skips entries that only carry an identity or registry token', () => {
    const secret = dockerConfigJson({
      'myregistry.azurecr.io': { identitytoken: 'refresh-token' },
      'gcr.io': { registrytoken: 'access-token' },
      'example.azurecr.io': { username: '00000000-0000-0000-0000-000000000000', identitytoken: 'refresh-token' },
      'ghcr.io': { username: 'u', password: 'p' },
    });
    expect(parseDockerSecret(secret).map((e) => e.server)).toEqual(['ghcr.io']);
  });

  it('returns no entries for an empty auths object', () => {
    expect(parseDockerSecret(dockerConfigJson({}))).toEqual([]);
  });

  const prefix = 'secret kruise-daemon-config/regcred: ';
  const malformed: Array<[string, Parameters<typeof parseDockerSecret>[0], string]> = [
    [
      'wrong type',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'Opaque', data: { password: b64(secretPassword) } },
      'has type "Opaque", expected kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg',
    ],
    ['no type', { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' } }, 'has no type, expected kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg'],
    [
      'dockerconfigjson type with the dockercfg key',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockercfg': b64('{}') } },
      'data has no .dockerconfigjson key',
    ],
    [
      'dockercfg type without data',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockercfg' },
      'data has no .dockercfg key',
    ],
    [
      'bad base64',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': `${secretPassword}!!` } },
      '.dockerconfigjson is not valid base64',
    ],
    [
      'empty value',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': '' } },
      '.dockerconfigjson is empty',
    ],
    [
      'invalid JSON that quotes the password',
      {
        metadata: { namespace: 'kruise-daemon-config', name: 'regcred' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': b64(`{"auths":{"x":{"username":"u","password":${secretPassword}}}}`) },
      },
      '.dockerconfigjson is not valid JSON',
    ],
    [
      'JSON that is not an object',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('["x"]') } },
      '.dockerconfigjson is not a JSON object',
    ],
    [
      'no auths',
      { metadata: { namespace: 'kruise-daemon-config', name: 'regcred' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{"credsStore":"desktop"}') } },
      '.dockerconfigjson has no "auths" object',
    ],
    ['auths that is not an object', dockerConfigJson([{ username: 'u', password: secretPassword }]), '"auths" in .dockerconfigjson is not an object'],
    ['entry that is not an object', dockerConfigJson({ 'ghcr.io': secretPassword }), 'entry "ghcr.io" in .dockerconfigjson is not an object'],
    ['auth that is not base64', dockerConfigJson({ 'ghcr.io': { auth: `u:${secretPassword}` } }), 'entry "ghcr.io" in .dockerconfigjson: "auth" is not valid base64'],
    [
      'auth without a colon',
      dockerConfigJson({ 'ghcr.io': { auth: b64(secretPassword.replace(':', '')) } }),
      'entry "ghcr.io" in .dockerconfigjson: "auth" does not decode to username:password',
    ],
    ['auth that is not a string', dockerConfigJson({ 'ghcr.io': { auth: 42 } }), 'entry "ghcr.io" in .dockerconfigjson: "auth" is not a string'],
    ['password that is not a string', dockerConfigJson({ 'ghcr.io': { username: 'u', password: 12345 } }), 'entry "ghcr.io" in .dockerconfigjson: "password" is not a string'],
    ['username without password', dockerConfigJson({ 'ghcr.io': { username: 'u' } }), 'entry "ghcr.io" in .dockerconfigjson has a username but no password'],
    ['password without username', dockerConfigJson({ 'ghcr.io': { password: secretPassword } }), 'entry "ghcr.io" in .dockerconfigjson has a password but no username'],
    ['entry without credentials', dockerConfigJson({ 'ghcr.io': { email: 'a@b.c' } }), 'entry "ghcr.io" in .dockerconfigjson has neither "auth" nor "username" and "password"'],
  ];

  it.each(malformed)('rejects %s with a clear message', (_name, secret, problem) => {
    const err = credentialError(secret);
    expect(err.message).toBe(prefix + problem);
    expect(err.name).toBe('CredentialError');
    expect(err).toBeInstanceOf(Error);
  });

  it('never puts a secret value into an error message', () => {
    const leaks = [secretPassword, 'hunter2', 'TOP-secret', b64(secretPassword), b64(`u:${secretPassword}`)];
    for (const [, secret] of malformed) {
      const message = credentialError(secret).message;
      for (const leak of leaks) expect(message).not.toContain(leak);
    }
  });

  it('names a secret without metadata recognisably', () => {
    expect(credentialError({ type: 'Opaque' }).message).toBe(
      'secret <no namespace>/<no name>: has type "Opaque", expected kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg',
    );
  });
});

describe('credentialsFor (kubelet keyring matching)', () => {
  const hubKeys = ['index.docker.io', 'https://index.docker.io/v1/', 'registry-1.docker.io', 'docker.io', 'https://docker.io', 'index.docker.io/v2/'];
  const hubImages = ['busybox', 'busybox:1.36', 'library/busybox', 'docker.io/library/busybox:latest', 'index.docker.io/library/busybox', 'openkruise/kruise-manager:v1.8.0', 'docker.io/bitnami/redis@sha256:' + 'a'.repeat(64)];

  it.each(hubKeys)('matches every Docker Hub image with the alias %s', (key) => {
    for (const image of hubImages) expect(users(credentialsFor(image, keyring(key)))).toEqual(['u0']);
    for (const image of ['ghcr.io/library/busybox', 'quay.io/busybox', 'docker.io.example.com/busybox', 'localhost/busybox']) {
      expect(credentialsFor(image, keyring(key))).toEqual([]);
    }
  });

  const cases: Array<[string, string[], string, string[]]> = [
    // description, keys (u0, u1, ... in this order), image, expected usernames
    ['a Docker Hub namespace key matches only that namespace', ['docker.io/openkruise', 'docker.io/library'], 'openkruise/kruise-manager', ['u0']],
    ['official images live under library/', ['docker.io/library'], 'nginx:1.25', ['u0']],
    ['a host key matches every repository on it', ['ghcr.io'], 'ghcr.io/openkruise/kruise/deep/path:v1', ['u0']],
    ['a scheme and /v1/ on the key are ignored', ['https://quay.io/v1/', 'http://ghcr.io'], 'quay.io/coreos/etcd', ['u0']],
    ['host names match case-insensitively', ['Registry.Example.COM'], 'registry.example.com/app', ['u0']],
    ['a port must be equal', ['127.0.0.1:5000', '127.0.0.1:5001', '127.0.0.1'], '127.0.0.1:5000/busybox:1.0', ['u0']],
    ['a key without a port does not match a registry with one', ['registry.example.com'], 'registry.example.com:443/app', []],
    ['a key with a port does not match a registry without one', ['registry.example.com:443'], 'registry.example.com/app', []],
    ['localhost with a port', ['localhost:5000', 'localhost'], 'localhost:5000/team/app', ['u0']],
    ['IPv6 registries with a port', ['[::1]:5000', '[::1]'], '[::1]:5000/busybox', ['u0']],
    ['a path key matches repositories under it', ['registry.example.com/team'], 'registry.example.com/team/app:1', ['u0']],
    ['a path key matches deeper repositories', ['registry.example.com/team/'], 'registry.example.com/team/sub/app', ['u0']],
    ['a path key matches the repository itself', ['registry.example.com/team/app'], 'registry.example.com/team/app@sha256:' + 'b'.repeat(64), ['u0']],
    ['a path prefix matches only on / boundaries', ['registry.example.com/team'], 'registry.example.com/teamx/app', []],
    ['a path key does not match another path', ['registry.example.com/team'], 'registry.example.com/other/app', []],
    ['a path key does not match a shorter repository', ['registry.example.com/team/app/x'], 'registry.example.com/team/app', []],
    ['a host glob matches one host part', ['*.example.com'], 'registry.example.com/app', ['u0']],
    ['a host glob does not match the bare domain', ['*.example.com'], 'example.com/app', []],
    ['a host glob does not match more host parts', ['*.example.com'], 'a.b.example.com/app', []],
    ['several host globs', ['*.*.example.com'], 'a.b.example.com/app', ['u0']],
    ['a glob inside a host part', ['*-registry.example.com', 'reg?.example.com'], 'eu-registry.example.com/app', ['u0']],
    ['? matches one character', ['reg?.example.com'], 'reg1.example.com/app', ['u0']],
    ['a host glob with a port and a path', ['*.example.com:5000/team'], 'registry.example.com:5000/team/app', ['u0']],
    ['no key matches', ['ghcr.io', 'quay.io'], 'registry.k8s.io/pause:3.9', []],
    [
      'more specific keys first, then less specific ones',
      ['registry.example.com', '*.example.com', 'registry.example.com/team', 'registry.example.com/team/app', 'https://registry.example.com/v1/'],
      'registry.example.com/team/app',
      ['u3', 'u2', 'u0', 'u4', 'u1'],
    ],
    ['Docker Hub aliases are equally specific: the order given decides', ['docker.io', 'index.docker.io', 'https://index.docker.io/v1/'], 'busybox', ['u0', 'u1', 'u2']],
    ['a Docker Hub path key before the host keys', ['https://index.docker.io/v1/', 'docker.io/library'], 'busybox', ['u1', 'u0']],
  ];

  it.each(cases)('%s', (_name, keys, image, expected) => {
    expect(users(credentialsFor(image, keyring(...keys)))).toEqual(expected);
  });

  it('keeps matching entries of several secrets in the order given and drops duplicates', () => {
    const a = parseDockerSecret(dockerConfigJson({ 'registry.example.com': { username: 'alice', password: 'pa' } }, 'a'));
    const b = parseDockerSecret(
      dockerConfigJson(
        {
          'registry.example.com/team': { username: 'bob', password: 'pb' },
          'https://registry.example.com': { auth: b64('alice:pa') },
          'registry.example.com:5000': { username: 'carol', password: 'pc' },
        },
        'b',
      ),
    );
    const c = parseDockerSecret({
      metadata: { namespace: 'kruise-daemon-config', name: 'c' },
      type: 'kubernetes.io/dockercfg',
      data: { '.dockercfg': b64(JSON.stringify({ 'registry.example.com': { username: 'dave', password: 'pd' } })) },
    });
    expect(credentialsFor('registry.example.com/team/app:v1', [...a, ...b, ...c])).toEqual([
      { username: 'bob', password: 'pb' },
      { username: 'alice', password: 'pa' },
      { username: 'dave', password: 'pd' },
    ]);
    expect(credentialsFor('registry.example.com/app', [...c, ...a])).toEqual([
      { username: 'dave', password: 'pd' },
      { username: 'alice', password: 'pa' },
    ]);
  });

  it('keeps the same username with different passwords (rotation)', () => {
    const entries: KeyringEntry[] = [
      { server: 'ghcr.io', auth: { username: 'bot', password: 'new' }, source: 'ns/a' },
      { server: 'ghcr.io', auth: { username: 'bot', password: 'old' }, source: 'ns/b' },
    ];
    expect(credentialsFor('ghcr.io/x/y', entries).map((a) => a.password)).toEqual(['new', 'old']);
  });

  it('returns nothing for an empty keyring and rejects an invalid image reference', () => {
    expect(credentialsFor('busybox', [])).toEqual([]);
    expect(() => credentialsFor('Not A Reference', keyring('docker.io'))).toThrow(InvalidReferenceError);
  });
});
