import {
  canonicalString,
  familiarName,
  InvalidReferenceError,
  joinNameTag,
  nameAndTag,
  parseReference,
  pullString,
  sameImage,
} from '../../api/image-reference.js';

const d64 = 'sha256:' + 'a'.repeat(64);
const e64 = 'sha256:' + '0123456789abcdef'.repeat(4);

describe('image reference normalisation (distribution/reference rules)', () => {
  const cases: Array<[string, string, string, string]> = [
    // input, canonical, familiar name, pull string
    ['nginx', 'docker.io/library/nginx:latest', 'nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.25', 'docker.io/library/nginx:1.25', 'nginx', 'docker.io/library/nginx:1.25'],
    ['library/nginx', 'docker.io/library/nginx:latest', 'nginx', 'docker.io/library/nginx:latest'],
    ['docker.io/nginx', 'docker.io/library/nginx:latest', 'nginx', 'docker.io/library/nginx:latest'],
    ['docker.io/library/nginx:1', 'docker.io/library/nginx:1', 'nginx', 'docker.io/library/nginx:1'],
    ['index.docker.io/library/nginx', 'docker.io/library/nginx:latest', 'nginx', 'docker.io/library/nginx:latest'],
    ['openkruise/kruise-manager:v1.8.0', 'docker.io/openkruise/kruise-manager:v1.8.0', 'openkruise/kruise-manager', 'docker.io/openkruise/kruise-manager:v1.8.0'],
    ['ghcr.io/openkruise/kruise', 'ghcr.io/openkruise/kruise:latest', 'ghcr.io/openkruise/kruise', 'ghcr.io/openkruise/kruise:latest'],
    ['registry.k8s.io/pause:3.9', 'registry.k8s.io/pause:3.9', 'registry.k8s.io/pause', 'registry.k8s.io/pause:3.9'],
    ['localhost/foo', 'localhost/foo:latest', 'localhost/foo', 'localhost/foo:latest'],
    ['localhost:5000/foo/bar:tag', 'localhost:5000/foo/bar:tag', 'localhost:5000/foo/bar', 'localhost:5000/foo/bar:tag'],
    ['127.0.0.1:5000/busybox:1.0', '127.0.0.1:5000/busybox:1.0', '127.0.0.1:5000/busybox', '127.0.0.1:5000/busybox:1.0'],
    ['[::1]:5000/busybox', '[::1]:5000/busybox:latest', '[::1]:5000/busybox', '[::1]:5000/busybox:latest'],
    [`busybox@${d64}`, `docker.io/library/busybox@${d64}`, 'busybox', `docker.io/library/busybox@${d64}`],
    [`busybox:1.36@${d64}`, `docker.io/library/busybox:1.36@${d64}`, 'busybox', `docker.io/library/busybox@${d64}`],
    [`127.0.0.1:5000/busybox@${e64}`, `127.0.0.1:5000/busybox@${e64}`, '127.0.0.1:5000/busybox', `127.0.0.1:5000/busybox@${e64}`],
    ['quay.io/prometheus/node-exporter:v1.7.0', 'quay.io/prometheus/node-exporter:v1.7.0', 'quay.io/prometheus/node-exporter', 'quay.io/prometheus/node-exporter:v1.7.0'],
    ['my_user/my-image__x:1_2.3-4', 'docker.io/my_user/my-image__x:1_2.3-4', 'my_user/my-image__x', 'docker.io/my_user/my-image__x:1_2.3-4'],
    ['a.b/c/d/e/f:g', 'a.b/c/d/e/f:g', 'a.b/c/d/e/f', 'a.b/c/d/e/f:g'],
  ];
  it.each(cases)('%s', (input, canonical, familiar, pull) => {
    const ref = parseReference(input);
    expect(canonicalString(ref)).toBe(canonical);
    expect(familiarName(ref)).toBe(familiar);
    expect(pullString(ref)).toBe(pull);
  });

  const invalid: Array<[string, RegExp]> = [
    ['', /empty/],
    ['Nginx', /lowercase/],
    ['nginx:', /invalid tag/],
    ['nginx:-bad', /invalid tag/],
    ['nginx@sha256:abc', /invalid digest|64/],
    ['nginx@sha256:' + 'A'.repeat(64), /64 lowercase/],
    ['foo//bar', /path component/],
    ['foo/bar-', /path component/],
    ['-foo', /path component/],
    ['exa mple', /whitespace/],
    ['host:port/repo', /registry host/],
    [':tag', /missing repository/],
    ['a'.repeat(256), /longer than/],
  ];
  it.each(invalid)('rejects %j', (input, why) => {
    expect(() => parseReference(input)).toThrow(InvalidReferenceError);
    expect(() => parseReference(input)).toThrow(why);
  });

  it('splits a user reference into the NodeImage key and tag, a digest winning', () => {
    expect(nameAndTag('nginx')).toEqual({ name: 'nginx', tag: 'latest' });
    expect(nameAndTag('docker.io/library/nginx:1.2')).toEqual({ name: 'nginx', tag: '1.2' });
    expect(nameAndTag(`127.0.0.1:5000/busybox:1.0@${d64}`)).toEqual({ name: '127.0.0.1:5000/busybox', tag: d64 });
  });

  it('joins a digest "tag" with @ (upstream #2534 joined it with :)', () => {
    expect(joinNameTag('busybox', d64)).toBe(`busybox@${d64}`);
    expect(joinNameTag('busybox', '1.0')).toBe('busybox:1.0');
    expect(pullString(parseReference(joinNameTag('busybox', d64)))).toBe(`docker.io/library/busybox@${d64}`);
  });

  it('matches runtime repoTags and repoDigests against a NodeImage name and tag', () => {
    expect(sameImage('docker.io/library/nginx:1.25', 'nginx', '1.25')).toBe(true);
    expect(sameImage('docker.io/library/nginx:1.25', 'nginx', '1.26')).toBe(false);
    expect(sameImage('docker.io/library/nginx:latest', 'library/nginx', 'latest')).toBe(true);
    expect(sameImage(`docker.io/library/nginx@${d64}`, 'nginx', d64)).toBe(true);
    expect(sameImage(`docker.io/library/nginx@${d64}`, 'nginx', 'latest')).toBe(false);
    expect(sameImage('docker.io/library/nginx:latest', 'nginx', d64)).toBe(false);
    expect(sameImage('127.0.0.1:5000/busybox:1.0', '127.0.0.1:5000/busybox', '1.0')).toBe(true);
    expect(sameImage('sha256:' + 'b'.repeat(64), 'nginx', 'latest')).toBe(false);
  });
});
