import { connect, type AddressInfo, type Socket } from 'node:net';
import { createServer, type Server } from 'node:tls';
import { generateCerts } from '../../manager/webhook/certs.js';

/**
 * A TLS terminator in front of a plain-HTTP registry (or a ThrottleProxy), serving a certificate
 * for 127.0.0.1 signed by a CA of its own: a registry mirror with a private CA.
 */
export class TlsProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** PEM of the CA that signed the proxy's certificate. */
    readonly caCert: string,
  ) {}

  static async start(target: string): Promise<TlsProxy> {
    const [host, port] = target.split(':');
    const certs = generateCerts(['127.0.0.1']);
    const server = createServer({ cert: certs.cert, key: certs.key });
    const proxy = new TlsProxy(server, certs.caCert);
    server.on('secureConnection', (client) => {
      const upstream = connect(Number(port), host ?? '127.0.0.1');
      proxy.sockets.add(client).add(upstream);
      const cleanup = (): void => {
        client.destroy();
        upstream.destroy();
        proxy.sockets.delete(client);
        proxy.sockets.delete(upstream);
      };
      client.on('error', cleanup).on('close', cleanup);
      upstream.on('error', cleanup).on('close', cleanup);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    // A client that does not trust the CA fails its handshake: not this proxy's error.
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return proxy;
  }

  /** host:port of the TLS side. */
  get address(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
