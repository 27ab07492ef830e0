import { status } from '@grpc/grpc-js';
import { classify, classifyMessage, CriError, definiteRegistryAnswer, toCriError } from '../../daemon/cri/errors.js';

describe('CRI error classification', () => {
  // Texts as containerd 1.6 and other runtimes and registries really word them.
  const byText: Array<[string, string]> = [
    ['failed to pull and unpack image "127.0.0.1:5001/private/busybox:1.0": failed to resolve reference "127.0.0.1:5001/private/busybox:1.0": unexpected status from HEAD request to http://127.0.0.1:5001/v2/private/busybox/manifests/1.0: 401 Unauthorized', 'unauthorized'],
    ['failed to pull and unpack image "docker.io/library/private:1": failed to resolve reference "docker.io/library/private:1": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed', 'unauthorized'],
    ['failed to resolve reference "ghcr.io/x/y:1": failed to authorize: failed to fetch anonymous token: unexpected status: 403 Forbidden', 'unauthorized'],
    ['Error response from daemon: Head "https://r/v2/x/manifests/1": no basic auth credentials', 'unauthorized'],
    ['failed to pull and unpack image "127.0.0.1:5000/busybox:nope": failed to resolve reference "127.0.0.1:5000/busybox:nope": 127.0.0.1:5000/busybox:nope: not found', 'not-found'],
    ['rpc error: code = NotFound desc = failed to pull image: manifest unknown: manifest unknown', 'not-found'],
    ['reading manifest 9.9 in quay.io/x/y: manifest unknown', 'not-found'],
    ['failed to pull and unpack image "127.0.0.1:1/busybox:1.0": failed to resolve reference "127.0.0.1:1/busybox:1.0": failed to do request: Head "http://127.0.0.1:1/v2/busybox/manifests/1.0": dial tcp 127.0.0.1:1: connect: connection refused', 'registry-unreachable'],
    ['failed to do request: Head "https://nope.invalid/v2/x/manifests/1": dial tcp: lookup nope.invalid: no such host', 'registry-unreachable'],
    ['failed to do request: Head "https://10.255.255.1/v2/": dial tcp 10.255.255.1:443: i/o timeout', 'registry-unreachable'],
    ['failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://r/v2/x/blobs/sha256:1": net/http: TLS handshake timeout', 'registry-unreachable'],
    ['tls: failed to verify certificate: x509: certificate signed by unknown authority', 'registry-unreachable'],
    ['failed to copy: read tcp 127.0.0.1:5555->127.0.0.1:5000: read: connection reset by peer', 'registry-unreachable'],
    ['failed to pull image: context deadline exceeded', 'deadline'],
    ['failed to pull image: context canceled', 'cancelled'],
    ['server is not initialized yet', 'unavailable'],
  ];
  it.each(byText)('UNKNOWN with %j', (text, kind) => {
    expect(classify(status.UNKNOWN, text)).toBe(kind);
  });

  it('uses the gRPC code when it is specific', () => {
    expect(classify(status.NOT_FOUND, 'an image with x not found')).toBe('not-found');
    expect(classify(status.DEADLINE_EXCEEDED, 'Deadline exceeded')).toBe('deadline');
    expect(classify(status.CANCELLED, 'Cancelled on client')).toBe('cancelled');
    expect(classify(status.UNAVAILABLE, 'No connection established. Last error: connect ENOENT /run/containerd/containerd.sock')).toBe('unavailable');
    expect(classify(status.UNIMPLEMENTED, 'unknown service runtime.v1.RuntimeService')).toBe('unimplemented');
    expect(classify(status.PERMISSION_DENIED, 'nope')).toBe('unauthorized');
    expect(classify(status.UNAUTHENTICATED, 'nope')).toBe('unauthorized');
  });

  it('falls back to other for unrecognised failures', () => {
    expect(classify(status.UNKNOWN, 'failed to extract layer: no space left on device')).toBe('other');
    expect(classifyMessage('something odd')).toBeUndefined();
  });

  it('wraps gRPC service errors keeping code, details and cause', () => {
    const svcErr = Object.assign(new Error('2 UNKNOWN: x: 401 Unauthorized'), { code: status.UNKNOWN, details: 'x: 401 Unauthorized', metadata: undefined });
    const e = toCriError('PullImage', svcErr);
    expect(e).toBeInstanceOf(CriError);
    expect(e.kind).toBe('unauthorized');
    expect(e.grpcCode).toBe(status.UNKNOWN);
    expect(e.message).toBe('PullImage: unauthorized: x: 401 Unauthorized');
    expect(e.cause).toBe(svcErr);
    expect(definiteRegistryAnswer(e)).toBe(false);
    expect(definiteRegistryAnswer(toCriError('PullImage', new Error('dial tcp: connection refused')))).toBe(false);
  });

  // Only the registry's word on the image itself (its manifest) fails a pull at once.
  const definite: Array<[string, boolean]> = [
    ['failed to pull and unpack image "127.0.0.1:5000/busybox:nope": failed to resolve reference "127.0.0.1:5000/busybox:nope": 127.0.0.1:5000/busybox:nope: not found', true],
    ['failed to pull and unpack image "r/private/busybox:1.0": failed to resolve reference "r/private/busybox:1.0": unexpected status from HEAD request to http://r/v2/private/busybox/manifests/1.0: 401 Unauthorized', true],
    ['pulling from host r failed with status code [manifests 1.0]: 403 Forbidden', true],
    ['reading manifest 9.9 in quay.io/x/y: manifest unknown', true],
    ['Error response from daemon: pull access denied for x, repository does not exist or may require authorization', true],
    // A CDN refusing a blob, a snapshotter losing a parent: nothing final about the image.
    ['failed to pull and unpack image "r/x:1": failed to copy: httpReadSeeker: failed open: unexpected status code https://cdn/v2/x/blobs/sha256:ab: 403 Forbidden', false],
    ['failed to pull and unpack image "r/x:1": failed to extract layer sha256:ab: failed to get reader from content store: content digest sha256:ab: not found', false],
    ['failed to pull and unpack image "r/x:1": failed to prepare extraction snapshot "extract-1 sha256:ab": parent snapshot sha256:cd does not exist: not found', false],
    ['an error that mentions 404 somewhere', false],
  ];
  it.each(definite)('definite registry answer? %j', (text, yes) => {
    expect(definiteRegistryAnswer(toCriError('PullImage', Object.assign(new Error(text), { code: status.UNKNOWN, details: text, metadata: undefined })))).toBe(yes);
  });

  it('takes a runtime\'s NOT_FOUND or UNAUTHENTICATED code as the registry\'s answer, UNAVAILABLE never', () => {
    expect(definiteRegistryAnswer(new CriError('not-found', 'PullImage', status.NOT_FOUND, 'image x not found'))).toBe(true);
    expect(definiteRegistryAnswer(new CriError('unauthorized', 'PullImage', status.UNAUTHENTICATED, 'denied'))).toBe(true);
    expect(definiteRegistryAnswer(new CriError('unavailable', 'PullImage', status.UNAVAILABLE, 'connect ENOENT'))).toBe(false);
  });
});
