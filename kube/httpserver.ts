import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface Check {
  name: string;
  /** Throws when not ready; a string is a warning that leaves the answer ready (200) but says it. */
  check: () => Promise<string | void> | string | void;
}

/** Parses ":10221", "127.0.0.1:10221" or "10221". */
function parseAddr(addr: string): { host: string | undefined; port: number } {
  const i = addr.lastIndexOf(':');
  const host = i > 0 ? addr.slice(0, i) : undefined;
  const port = Number(i >= 0 ? addr.slice(i + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid listen address "${addr}"`);
  return { host: host === '' ? undefined : host, port };
}

async function runChecks(checks: readonly Check[]): Promise<{ failed?: string; warnings: string[] }> {
  const warnings: string[] = [];
  for (const c of checks) {
    try {
      const warning = await c.check();
      if (typeof warning === 'string') warnings.push(`warning: ${c.name}: ${warning}`);
    } catch (err) {
      return { failed: `check ${c.name} failed, err: ${err instanceof Error ? err.message : String(err)}`, warnings };
    }
  }
  return { warnings };
}

/**
 * /healthz (liveness), /readyz (readiness) and /metrics on one port. A failing check answers 500
 * with upstream's wording "check <name> failed, err: <err>".
 */
export async function serveOps(addr: string, registry: Registry, checks: { ready: readonly Check[]; live?: readonly Check[] }): Promise<Server> {
  const { host, port } = parseAddr(addr);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(code, { 'Content-Type': type });
      res.end(body);
    };
    if (path === '/healthz' || path === '/readyz') {
      void runChecks((path === '/healthz' ? checks.live : checks.ready) ?? []).then(({ failed, warnings }) =>
        failed ? reply(500, failed) : reply(200, ['ok', ...warnings].join('\n')),
      );
    } else if (path === '/metrics') {
      void registry.metrics().then(
        (text) => reply(200, text, registry.contentType),
        (err: unknown) => reply(500, String(err)),
      );
    } else reply(404, 'not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot listen on ${addr}: ${err.message}`, { cause: err })));
    server.listen(port, host, resolve);
  });
  return server;
}
