import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { CriClient } from '../../daemon/cri/client.js';
import { runPreStop, type PreStopContext } from '../../daemon/crr/prestop.js';

// httpGet hooks against real sockets on loopback: what the daemon accepts as an answer.
const pod = { name: 'web-0', namespace: 'default', uid: 'u-1' };

async function serve(answer: string | undefined): Promise<{ port: number; requests: string[]; server: Server }> {
  const requests: string[] = [];
  const server = createServer((socket) => {
    socket.once('data', (chunk) => {
      requests.push(chunk.toString('latin1'));
      if (answer === undefined) socket.destroy();
      else socket.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, requests, server };
}

function context(port: number): PreStopContext {
  return {
    // httpGet hooks never reach the runtime.
    cri: undefined as unknown as CriClient,
    containerId: 'c-1',
    containerName: 'web',
    ports: [{ name: 'hook', containerPort: port }],
    pod,
    podAddress: () => Promise.resolve('127.0.0.1'),
    timeoutMs: 2_000,
  };
}

describe('httpGet preStop hooks', () => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
  });

  it('succeeds on an answer whose header lines end in a bare LF, as busybox httpd sends CGI output (the kubelet accepts it)', async () => {
    const { port, requests, server } = await serve('HTTP/1.1 200 OK\r\nContent-Type: text/plain\n\nok\n');
    servers.push(server);
    await expect(runPreStop({ httpGet: { path: 'cgi-bin/hook?from=crr', port: 'hook' } }, context(port))).resolves.toBeUndefined();
    expect(requests[0]).toMatch(/^GET \/cgi-bin\/hook\?from=crr HTTP\/1\.1\r\n/);
    expect(requests[0]).toContain('User-Agent: kube-lifecycle/1.20\r\n');
  });

  it('succeeds on any status, as the kubelet does', async () => {
    const { port, server } = await serve('HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n');
    servers.push(server);
    await expect(runPreStop({ httpGet: { path: '/drain', port } }, context(port))).resolves.toBeUndefined();
  });

  it('fails with the FailedPreStopHook message when no answer comes', async () => {
    const { port, server } = await serve(undefined);
    servers.push(server);
    const message = await runPreStop({ httpGet: { path: '/drain', port } }, context(port));
    expect(message).toMatch(/^Http lifecycle hook \(\/drain\) for Container "web" in Pod "web-0_default\(u-1\)" failed - error: socket hang up/);
  });
});
