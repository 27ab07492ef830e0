import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of a registry that answers the next `refuse` blob downloads with 403
 * Forbidden, as a CDN in front of a registry does when a signed URL expired: the manifest resolves,
 * a layer does not, and trying again works.
 */
export class BlobRefusingProxy {
  /** Blob requests still to refuse. */
  refuse = 0;
  refused = 0;
  address = '';
  private readonly server;

  private constructor(registry: string) {
    const [host, port] = registry.split(':');
    this.server = createServer((req, res) => {
      if (this.refuse > 0 && req.method === 'GET' && /\/blobs\/sha256:/.test(req.url ?? '')) {
        this.refuse--;
        this.refused++;
        res.writeHead(403, { 'content-type': 'application/xml' }).end('<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
        return;
      }
      const up = request({ host, port: Number(port), method: req.method, path: req.url, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
  }

  static async start(registry: string): Promise<BlobRefusingProxy> {
    const proxy = new BlobRefusingProxy(registry);
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    proxy.address = `127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
    return proxy;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
