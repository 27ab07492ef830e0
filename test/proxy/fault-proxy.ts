import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import type { Duplex } from 'node:stream';
import { KubeConfig } from '@kubernetes/client-node';

export interface FaultProxyOptions {
  /** The real API server, e.g. https://127.0.0.1:6443. */
  upstream: string;
  /** Serving cert and key: the apiserver's own, so clients that trust the cluster CA need no change. */
  certFile: string;
  keyFile: string;
  /** CA the upstream's serving cert chains to. */
  caFile: string;
  /** Listening port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
}

/** Which requests a fault applies to; every given field must match. */
export interface RequestMatch {
  /** Case-insensitive; several methods may be given. */
  method?: string | string[];
  /** Tested against the path without the query string. */
  path?: RegExp;
  watch?: boolean;
  /** Query parameters, each tested against the request's value ('' when absent). */
  query?: Record<string, RegExp>;
}

export interface FailOptions {
  status: number;
  /** How many matching requests fail; Infinity fails them until the fault is cleared. */
  times?: number;
  match?: RequestMatch;
  /** Sent as Retry-After and as details.retryAfterSeconds, as the apiserver does for 429s. */
  retryAfterSeconds?: number;
  /** Defaults to the reason the apiserver uses for that code. */
  reason?: string;
  message?: string;
  /** Replaces the generated Status body (objects are sent as JSON, strings as plain text). */
  body?: string | Record<string, unknown>;
}

export type FaultKind = 'fail' | 'expire' | 'cut' | 'ended' | 'refused' | 'upstream-error';

export interface ProxiedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  /** HTTP/1.1 Upgrade request (exec, attach, port-forward, websocket watch). */
  upgrade: boolean;
  /** Status sent to the client; null until the response head went out (or if it never did). */
  status: number | null;
  /** Epoch milliseconds when the request arrived. */
  at: number;
  /** When the exchange finished or broke; null while it is in flight. */
  endedAt: number | null;
  fault?: FaultKind;
  delayedMs?: number;
  /** Why the exchange broke, when it did. */
  error?: string;
}

export interface CountFilter {
  method?: string;
  pathRegex?: RegExp;
  watch?: boolean;
  status?: number;
  /** true: only requests still in flight; false: only finished ones. */
  active?: boolean;
}

/** A queued fault: how much of it is left, and a way to withdraw it. */
export interface FaultHandle {
  readonly remaining: number;
  readonly consumed: number;
  clear(): void;
}

interface Rule {
  kind: 'fail' | 'expire';
  remaining: number;
  consumed: number;
  match: RequestMatch;
  fail?: FailOptions;
}

/** One client exchange the proxy is still serving; kept so faults and stop() can break it. */
interface Inflight {
  entry: ProxiedRequest;
  clientSocket: Duplex;
  upstreamRequest?: ClientRequest;
  upstreamSocket?: Duplex;
  /** The response being relayed to the client, once the upstream answered. */
  response?: ServerResponse;
  timer?: NodeJS.Timeout;
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/**
 * What kube-apiserver answers for a path no handler serves (Go's http.NotFound): a starting server
 * answers so for custom resources until it has read their CRDs. No Status, so no reason NotFound.
 */
export const BARE_NOT_FOUND = { status: 404, body: '404 page not found' } as const;

/** The event a real apiserver sends when a watch's resourceVersion has been compacted away. */
export const EXPIRED_WATCH_EVENT = {
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 },
} as const;

// Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection, so each side of the proxy has its own.
// transfer-encoding stays on requests: without it Node would send a chunked DELETE body unframed.
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

// Go's strconv.ParseBool, which the apiserver uses for ?watch=.
const TRUE_VALUES = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * A TLS man-in-the-middle between a client and the real API server that injects faults on demand:
 * failed responses, expired and cut watches, latency, and connection outages.
 */
export class FaultProxy {
  private readonly log: ProxiedRequest[] = [];
  private readonly rules: Rule[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly inflight = new Set<Inflight>();
  private readonly waiters = new Set<() => void>();
  private readonly agent: https.Agent;
  private readonly upstreamUrl: URL;
  private readonly basePath: string;
  private delayMs = 0;
  private delayMatch: RequestMatch = {};
  private refusing = false;
  private refuseTimer: NodeJS.Timeout | undefined;
  private refused = 0;
  private stopped = false;
  private tmpDir: string | undefined;
  private kubeconfigs = 0;

  private constructor(
    private readonly listener: net.Server,
    private readonly server: https.Server,
    private readonly port: number,
    opts: FaultProxyOptions,
  ) {
    this.upstreamUrl = new URL(opts.upstream);
    this.basePath = this.upstreamUrl.pathname.replace(/\/+$/, '');
    this.agent = new https.Agent({ keepAlive: true, ca: readFileSync(opts.caFile) });
    listener.on('connection', (socket) => this.onConnection(socket));
    // Accept failures (EMFILE and the like) only cost that one connection; they must not crash the test run.
    listener.on('error', () => undefined);
    server.on('request', (req, res) => this.onRequest(req, res));
    server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
  }

  static async start(opts: FaultProxyOptions): Promise<FaultProxy> {
    // The TLS server never listens itself: a plain TCP listener in front decides, per connection,
    // whether to hand it over or reset it, which is how outages are modelled.
    const server = https.createServer({
      cert: readFileSync(opts.certFile),
      key: readFileSync(opts.keyFile),
      keepAliveTimeout: 30_000,
      // Watches are long-lived; the proxy must never be the one that times them out.
      requestTimeout: 0,
      headersTimeout: 60_000,
      noDelay: true,
    });
    const listener = net.createServer();
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen({ host: '127.0.0.1', port: opts.port ?? 0 }, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    const address = listener.address();
    if (address === null || typeof address === 'string') throw new Error('fault proxy: listener has no TCP address');
    return new FaultProxy(listener, server, address.port, opts);
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Connections reset by refuseConnections() so far. */
  get refusedConnections(): number {
    return this.refused;
  }

  /** The kubeconfig at srcPath with every cluster that points at the upstream pointed at the proxy instead. */
  loadKubeConfig(srcPath: string): KubeConfig {
    const src = new KubeConfig();
    src.loadFromFile(srcPath);
    let rewritten = 0;
    const clusters = src.clusters.map((c) => {
      if (sameOrigin(c.server, this.upstreamUrl)) {
        rewritten++;
        return { ...c, server: this.url };
      }
      return c;
    });
    if (rewritten === 0) throw new Error(`fault proxy: no cluster in ${srcPath} points at ${this.upstreamUrl.origin}`);
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters, users: src.users, contexts: src.contexts, currentContext: src.getCurrentContext() });
    return kc;
  }

  /** Writes loadKubeConfig(srcPath) to a private temporary file (removed by stop()) and returns its path. */
  kubeconfig(srcPath: string): string {
    this.tmpDir ??= mkdtempSync(join(tmpdir(), 'fault-proxy-'));
    const path = join(this.tmpDir, `kubeconfig-${++this.kubeconfigs}`);
    writeFileSync(path, this.loadKubeConfig(srcPath).exportConfig(), { mode: 0o600 });
    return path;
  }

  /** Answers the next `times` matching requests with `status` and a Kubernetes Status body instead of forwarding them. */
  failNext(opts: FailOptions): FaultHandle {
    return this.addRule({ kind: 'fail', remaining: opts.times ?? 1, consumed: 0, match: opts.match ?? {}, fail: opts });
  }

  /** The next `times` matching watches get a 410 Expired ERROR event and then a clean end of stream. */
  expireWatches(times = 1, match: Omit<RequestMatch, 'watch'> = {}): FaultHandle {
    return this.addRule({ kind: 'expire', remaining: times, consumed: 0, match: { ...match, watch: true } });
  }

  clearFaults(): void {
    this.rules.length = 0;
  }

  /** Breaks every watch in flight on both sides, as a dropped connection would; returns how many. */
  cutWatches(match: Omit<RequestMatch, 'watch'> = {}): number {
    let cut = 0;
    for (const f of [...this.inflight]) {
      if (!f.entry.watch || !matches(f.entry, match)) continue;
      f.entry.fault = 'cut';
      this.kill(f, 'cut by fault proxy');
      cut++;
    }
    return cut;
  }

  /**
   * Ends every matching open watch cleanly, as kube-apiserver does when it closes a watcher that lags
   * behind its watch cache (the client sees a complete response, not a broken stream).
   */
  endWatches(match: Omit<RequestMatch, 'watch'> = {}): number {
    let ended = 0;
    for (const f of [...this.inflight]) {
      if (!f.entry.watch || !matches(f.entry, match) || f.response === undefined) continue;
      f.entry.fault = 'ended';
      f.response.end();
      this.finish(f, 'ended by fault proxy');
      f.upstreamRequest?.destroy();
      ended++;
    }
    return ended;
  }

  /** Holds every new matching request for `ms` before answering it; delay(0) stops that. */
  delay(ms: number, match: RequestMatch = {}): void {
    this.delayMs = ms;
    this.delayMatch = match;
  }

  /**
   * Models an API server outage: open connections are destroyed and new ones reset, for `ms`
   * or until acceptConnections().
   */
  refuseConnections(ms?: number): void {
    clearTimeout(this.refuseTimer);
    this.refuseTimer = undefined;
    this.refusing = true;
    for (const f of [...this.inflight]) {
      f.entry.fault ??= 'refused';
      this.kill(f, 'connection refused by fault proxy');
    }
    for (const s of this.sockets) s.destroy();
    if (ms !== undefined) this.refuseTimer = setTimeout(() => this.acceptConnections(), ms);
  }

  acceptConnections(): void {
    clearTimeout(this.refuseTimer);
    this.refuseTimer = undefined;
    this.refusing = false;
  }

  /** Clears every fault: queued failures and expiries, delay, and an outage. */
  reset(): void {
    this.clearFaults();
    this.delay(0);
    this.acceptConnections();
  }

  requests(): ProxiedRequest[] {
    return this.log.map((e) => ({ ...e, query: { ...e.query } }));
  }

  clearLog(): void {
    this.log.length = 0;
  }

  count(filter: CountFilter = {}): number {
    return this.log.filter((e) => matchesFilter(e, filter)).length;
  }

  /** Resolves once count(filter) reaches `n`, so a test can wait for a client to retry or re-watch. */
  async waitForCount(filter: CountFilter, n: number, timeoutMs = 10_000): Promise<void> {
    if (this.count(filter) >= n) return;
    await new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (this.count(filter) < n) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`fault proxy: ${this.count(filter)} of ${n} requests matching ${describeFilter(filter)} after ${timeoutMs}ms`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.refuseTimer);
    const closed = new Promise<void>((resolve) => this.listener.close(() => resolve()));
    for (const f of [...this.inflight]) this.kill(f, 'fault proxy stopped');
    for (const s of this.sockets) s.destroy();
    this.agent.destroy();
    // The TLS server never listened, but close() is what stops its connection-checking timer.
    this.server.close(() => undefined);
    await closed;
    if (this.tmpDir) rmSync(this.tmpDir, { recursive: true, force: true });
  }

  private addRule(rule: Rule): FaultHandle {
    this.rules.push(rule);
    const rules = this.rules;
    return {
      get remaining() {
        return rule.remaining;
      },
      get consumed() {
        return rule.consumed;
      },
      clear() {
        const i = rules.indexOf(rule);
        if (i >= 0) rules.splice(i, 1);
      },
    };
  }

  /** Decided when the request arrives, so a fault applies to the requests that come after it was set. */
  private takeRule(entry: ProxiedRequest): Rule | undefined {
    const rule = this.rules.find((r) => r.remaining > 0 && matches(entry, r.match) && !(r.kind === 'expire' && entry.upgrade));
    if (!rule) return undefined;
    rule.remaining--;
    rule.consumed++;
    if (rule.remaining <= 0) this.rules.splice(this.rules.indexOf(rule), 1);
    return rule;
  }

  private onConnection(socket: Socket): void {
    // A reset socket may still report ECONNRESET; nobody else listens on the raw socket.
    socket.on('error', () => undefined);
    if (this.refusing || this.stopped) {
      this.refused++;
      socket.resetAndDestroy();
      return;
    }
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    this.server.emit('connection', socket);
  }

  private record(req: IncomingMessage, upgrade: boolean): ProxiedRequest {
    const url = new URL(req.url ?? '/', 'https://proxy.invalid');
    const query = Object.fromEntries(url.searchParams);
    const entry: ProxiedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      watch: TRUE_VALUES.has(url.searchParams.get('watch') ?? '') || /^\/apis?\/(?:[^/]+\/)*watch\//.test(url.pathname),
      upgrade,
      status: null,
      at: Date.now(),
      endedAt: null,
    };
    this.log.push(entry);
    this.notify();
    return entry;
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  private setStatus(entry: ProxiedRequest, status: number): void {
    entry.status = status;
    this.notify();
  }

  private finish(f: Inflight, error?: string): void {
    if (!this.inflight.delete(f)) return;
    clearTimeout(f.timer);
    f.entry.endedAt = Date.now();
    if (error !== undefined) f.entry.error ??= error;
    this.notify();
  }

  private kill(f: Inflight, why: string): void {
    this.finish(f, why);
    f.clientSocket.destroy();
    f.upstreamRequest?.destroy();
    f.upstreamSocket?.destroy();
  }

  /** Runs `go` after the configured delay, unless the client gave up meanwhile. */
  private schedule(f: Inflight, go: () => void): void {
    const ms = this.delayMs > 0 && matches(f.entry, this.delayMatch) ? this.delayMs : 0;
    if (ms === 0) {
      go();
      return;
    }
    f.entry.delayedMs = ms;
    f.timer = setTimeout(() => {
      if (this.inflight.has(f)) go();
    }, ms);
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const entry = this.record(req, false);
    const f: Inflight = { entry, clientSocket: req.socket };
    this.inflight.add(f);
    const rule = this.takeRule(entry);
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    res.on('close', () => {
      if (res.writableFinished) {
        this.finish(f);
        return;
      }
      // The client went away (or a fault broke the exchange): stop the upstream request as well.
      this.finish(f, 'client closed the connection');
      f.upstreamRequest?.destroy();
    });
    this.schedule(f, () => {
      if (rule?.kind === 'fail' && rule.fail) {
        entry.fault = 'fail';
        req.resume();
        this.sendStatus(res, entry, rule.fail);
      } else if (rule?.kind === 'expire') {
        entry.fault = 'expire';
        req.resume();
        this.sendExpired(res, entry);
      } else {
        this.forward(req, res, f);
      }
    });
  }

  private sendStatus(res: ServerResponse, entry: ProxiedRequest, opts: FailOptions): void {
    if (res.destroyed || res.headersSent) return;
    const reason = opts.reason ?? REASONS[opts.status] ?? 'Unknown';
    let body: string;
    if (typeof opts.body === 'string') body = opts.body;
    else if (opts.body) body = JSON.stringify(opts.body);
    else {
      body = JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: opts.message ?? `fault proxy: injected ${opts.status} ${reason}`,
        reason,
        ...(opts.retryAfterSeconds !== undefined ? { details: { retryAfterSeconds: opts.retryAfterSeconds } } : {}),
        code: opts.status,
      });
    }
    const contentType = typeof opts.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    const headers: OutgoingHttpHeaders = { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-cache, private' };
    if (opts.retryAfterSeconds !== undefined) headers['retry-after'] = String(opts.retryAfterSeconds);
    this.setStatus(entry, opts.status);
    res.writeHead(opts.status, headers);
    res.end(body);
  }

  private sendExpired(res: ServerResponse, entry: ProxiedRequest): void {
    if (res.destroyed || res.headersSent) return;
    this.setStatus(entry, 200);
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    res.end(`${JSON.stringify(EXPIRED_WATCH_EVENT)}\n`);
  }

  private upstreamRequest(req: IncomingMessage, headers: OutgoingHttpHeaders): ClientRequest {
    return https.request({
      protocol: 'https:',
      hostname: this.upstreamUrl.hostname.replace(/^\[|\]$/g, ''),
      port: this.upstreamUrl.port || 443,
      method: req.method,
      path: `${this.basePath}${req.url ?? '/'}`,
      headers: { ...headers, host: this.upstreamUrl.host },
      agent: this.agent,
    });
  }

  private forward(req: IncomingMessage, res: ServerResponse, f: Inflight): void {
    const up = this.upstreamRequest(req, withoutHopByHop(req.headers));
    f.upstreamRequest = up;
    up.on('response', (upRes) => {
      const status = upRes.statusCode ?? 502;
      this.setStatus(f.entry, status);
      const headers = withoutHopByHop(upRes.headers);
      delete headers['transfer-encoding'];
      res.writeHead(status, upRes.statusMessage, headers);
      f.response = res;
      // Watch clients wait for the head before they consider the watch open; the apiserver sends it at once.
      if (upRes.headers['content-length'] === undefined) res.flushHeaders();
      pipeline(upRes, res, (err) => {
        if (err) f.entry.error ??= `stream broke: ${err.message}`;
      });
    });
    up.on('error', (err) => {
      if (!this.inflight.has(f)) return;
      if (res.headersSent) {
        this.kill(f, `upstream stream broke: ${err.message}`);
        return;
      }
      f.entry.fault = 'upstream-error';
      f.entry.error = `upstream: ${err.message}`;
      this.sendStatus(res, f.entry, { status: 502, message: `fault proxy: upstream ${this.upstreamUrl.origin} failed: ${err.message}` });
    });
    // Not pipeline(): it would destroy the client request, and with it the socket the 502 must go out on.
    req.pipe(up);
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const entry = this.record(req, true);
    const f: Inflight = { entry, clientSocket: socket };
    this.inflight.add(f);
    const rule = this.takeRule(entry);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.finish(f);
      f.upstreamRequest?.destroy();
      f.upstreamSocket?.destroy();
    });
    this.schedule(f, () => {
      if (rule?.fail) {
        entry.fault = 'fail';
        const reason = rule.fail.reason ?? REASONS[rule.fail.status] ?? 'Unknown';
        const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: rule.fail.message ?? `fault proxy: injected ${rule.fail.status} ${reason}`, reason, code: rule.fail.status });
        this.setStatus(entry, rule.fail.status);
        socket.end(`HTTP/1.1 ${rule.fail.status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
        return;
      }
      this.forwardUpgrade(req, socket, head, f);
    });
  }

  private forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, f: Inflight): void {
    const headers = withoutHopByHop(req.headers);
    headers['connection'] = 'Upgrade';
    if (req.headers.upgrade !== undefined) headers['upgrade'] = req.headers.upgrade;
    const up = this.upstreamRequest(req, headers);
    f.upstreamRequest = up;
    up.on('upgrade', (upRes, upSocket, upHead) => {
      f.upstreamSocket = upSocket;
      upSocket.on('error', () => undefined);
      if (!this.inflight.has(f)) {
        upSocket.destroy();
        return;
      }
      this.setStatus(f.entry, upRes.statusCode ?? 101);
      socket.write(rawHead(upRes));
      if (upHead.length > 0) socket.write(upHead);
      if (head.length > 0) upSocket.write(head);
      upSocket.on('close', () => this.kill(f, 'upstream closed the upgraded connection'));
      upSocket.pipe(socket);
      socket.pipe(upSocket);
    });
    up.on('response', (upRes) => {
      // The upstream declined the upgrade; relay its answer and close, since the client expects no reuse.
      this.setStatus(f.entry, upRes.statusCode ?? 502);
      const chunks: Buffer[] = [];
      upRes.on('data', (c: Buffer) => chunks.push(c));
      upRes.on('error', () => this.kill(f, 'upstream response broke'));
      upRes.on('end', () => {
        const body = Buffer.concat(chunks);
        const kept: string[] = [];
        for (let i = 0; i + 1 < upRes.rawHeaders.length; i += 2) {
          const name = upRes.rawHeaders[i] ?? '';
          if (['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name.toLowerCase())) continue;
          kept.push(`${name}: ${upRes.rawHeaders[i + 1] ?? ''}`);
        }
        const headText = [`HTTP/1.1 ${upRes.statusCode ?? 502} ${upRes.statusMessage ?? ''}`, ...kept, `content-length: ${body.length}`, 'connection: close'].join('\r\n');
        socket.end(Buffer.concat([Buffer.from(`${headText}\r\n\r\n`), body]));
      });
    });
    up.on('error', (err) => {
      if (!this.inflight.has(f)) return;
      if (f.upstreamSocket) {
        this.kill(f, `upstream: ${err.message}`);
        return;
      }
      f.entry.fault = 'upstream-error';
      f.entry.error = `upstream: ${err.message}`;
      this.setStatus(f.entry, 502);
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `fault proxy: upstream failed: ${err.message}`, reason: 'InternalError', code: 502 });
      socket.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    });
    up.end();
  }
}

function sameOrigin(server: string, upstream: URL): boolean {
  try {
    return new URL(server).origin === upstream.origin;
  } catch {
    return false;
  }
}

function matches(entry: ProxiedRequest, m: RequestMatch): boolean {
  if (m.method !== undefined) {
    const methods = (Array.isArray(m.method) ? m.method : [m.method]).map((x) => x.toUpperCase());
    if (!methods.includes(entry.method.toUpperCase())) return false;
  }
  if (m.path && !m.path.test(entry.path)) return false;
  if (m.watch !== undefined && m.watch !== entry.watch) return false;
  for (const [k, re] of Object.entries(m.query ?? {})) if (!re.test(entry.query[k] ?? '')) return false;
  return true;
}

function matchesFilter(e: ProxiedRequest, f: CountFilter): boolean {
  if (f.method !== undefined && f.method.toUpperCase() !== e.method.toUpperCase()) return false;
  if (f.pathRegex && !f.pathRegex.test(e.path)) return false;
  if (f.watch !== undefined && f.watch !== e.watch) return false;
  if (f.status !== undefined && f.status !== e.status) return false;
  if (f.active !== undefined && f.active !== (e.endedAt === null)) return false;
  return true;
}

function describeFilter(f: CountFilter): string {
  return JSON.stringify({ ...f, pathRegex: f.pathRegex?.source });
}

function withoutHopByHop(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const drop = new Set(HOP_BY_HOP);
  for (const token of (headers.connection ?? '').split(',')) {
    if (token.trim() !== '') drop.add(token.trim().toLowerCase());
  }
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !drop.has(name)) out[name] = value;
  }
  return out;
}

function rawHead(res: IncomingMessage): string {
  const lines = [`HTTP/1.1 ${res.statusCode ?? 101} ${res.statusMessage ?? ''}`];
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i] ?? ''}: ${res.rawHeaders[i + 1] ?? ''}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
