import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a registry that limits download speed, so a 50 MB pull lasts long
 * enough for a test to act while it is in flight. `pause()` stalls every transfer.
 */
export class ThrottleProxy {
  private readonly sockets = new Set<Socket>();
  private paused = false;
  /** Bytes sent to clients so far: what the registry's answers cost, resumed downloads included. */
  sent = 0;

  private constructor(
    private readonly server: Server,
    public bytesPerSecond: number,
  ) {}

  static async start(target: string, bytesPerSecond: number): Promise<ThrottleProxy> {
    const [host, port] = target.split(':');
    const server = createServer();
    const proxy = new ThrottleProxy(server, bytesPerSecond);
    server.on('connection', (client) => proxy.onConnection(client, host ?? '127.0.0.1', Number(port)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return proxy;
  }

  /** host:port to use in image references instead of the registry's own. */
  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private onConnection(client: Socket, host: string, port: number): void {
    const upstream = connect(port, host);
    const queue: Buffer[] = [];
    let sending = false;
    this.sockets.add(client).add(upstream);
    const cleanup = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', cleanup).on('close', cleanup);
    // A registry that closes after its answer (Connection: close) has not been heard in full yet:
    // the paced queue still goes out, then the client is ended (below).
    upstream.on('error', cleanup).on('close', () => {
      if (queue.length === 0 && !sending) cleanup();
    });
    client.pipe(upstream);
    // Downstream bytes go out in 16 KiB slices paced to the rate.
    const pump = (): void => {
      if (sending) return;
      const chunk = queue.shift();
      if (!chunk) {
        upstream.resume();
        return;
      }
      sending = true;
      const slice = chunk.subarray(0, 16384);
      if (chunk.length > slice.length) queue.unshift(chunk.subarray(slice.length));
      const wait = this.paused ? 100 : (1000 * slice.length) / this.bytesPerSecond;
      setTimeout(() => {
        sending = false;
        if (this.paused) {
          queue.unshift(slice);
        } else if (!client.destroyed) {
          this.sent += slice.length;
          client.write(slice);
        }
        pump();
      }, wait);
    };
    upstream.on('data', (d: Buffer) => {
      queue.push(d);
      if (queue.length > 8) upstream.pause();
      pump();
    });
    upstream.on('end', () => {
      const finish = setInterval(() => {
        if (queue.length === 0 && !sending) {
          clearInterval(finish);
          client.end();
        }
      }, 20);
    });
  }
}
