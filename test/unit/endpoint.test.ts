import { socketPath } from '../../daemon/cri/client.js';

describe('runtime endpoint parsing', () => {
  it.each([
    ['unix:///run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
    ['unix:/run/containerd/containerd.sock', '/run/containerd/containerd.sock'],
    ['/var/run/crio/crio.sock', '/var/run/crio/crio.sock'],
    ['  unix:///tmp/x.sock ', '/tmp/x.sock'],
  ])('%s', (input, path) => expect(socketPath(input)).toBe(path));

  it.each(['tcp://127.0.0.1:1234', 'containerd.sock', 'npipe:////./pipe/x'])('rejects %s with a hint', (input) => {
    expect(() => socketPath(input)).toThrow(/unix:\/\/\/path\/to\/socket/);
  });
});
