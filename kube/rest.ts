import https from 'node:https';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { ListSplitter } from './list-splitter.js';
import type { ListMeta } from '../api/types/common.js';
import type { ClusterAccess } from './access.js';
import { TokenBucket, type Priority } from './ratelimit.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** Where the call queues under the client's QPS budget (events: low, others: normal). */
  priority?: Priority;
  body?: unknown;
  /** Defaults to application/json; patches pass their patch type. */
  contentType?: string;
  signal?: AbortSignal | undefined;
  timeoutMs?: number;
}

export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; kind?: string; retryAfterSeconds?: number; causes?: Array<{ field?: string; message?: string }> };
}

/** A 2xx answer whose body is not what was asked for (bad JSON, cut short, an item that fails to decode). */
class MalformedBody extends Error {
  constructor(cause: unknown) {
    super(`malformed answer: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** A failed API call: HTTP status (0 when no answer came), the server's reason and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly verb: string,
    readonly path: string,
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(`${verb} ${path}: ${status === 0 ? 'no answer' : `HTTP ${status}`} ${reason}: ${message}`, options);
    this.name = 'ApiError';
  }
  get notFound(): boolean {
    return this.status === 404;
  }
  /**
   * The object named is absent: a 404 whose Status says NotFound. A bare 404 ("404 page not
   * found") is a path the server does not serve, or not yet: a restarting kube-apiserver answers so
   * for custom resources until it has read their CRDs (apiextensions-apiserver's
   * customresource_handler.go hands them to its not-found delegate), and deciding from that that a
   * NodeImage or a job is gone would drop what it holds.
   */
  get objectNotFound(): boolean {
    return this.status === 404 && this.reason === 'NotFound';
  }
  get conflict(): boolean {
    return this.status === 409 && this.reason !== 'AlreadyExists';
  }
  get alreadyExists(): boolean {
    return this.status === 409 && this.reason === 'AlreadyExists';
  }
  get gone(): boolean {
    return this.status === 410;
  }
  get invalid(): boolean {
    return this.status === 422 || this.status === 400;
  }
  get forbidden(): boolean {
    return this.status === 403;
  }
  /** Worth retrying later: throttled, server trouble, or no answer at all. */
  get transient(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

export interface WatchEvent<T = unknown> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** What a metrics sink learns about every request. */
export interface RequestObserver {
  (verb: string, resource: string, status: number, seconds: number, where: { group: string; namespace: string | undefined; name: string | undefined }): void;
}

/** Learns of a request the caller may make on a path it did not take this time (see RestClient.intend). */
export interface IntentObserver {
  (verb: string, resource: string, where: { group: string; namespace: string | undefined; name: string | undefined }): void;
}

export interface RestClientOptions {
  /** Client-side rate limit, as client-go's QPS/burst (qps <= 0: unlimited). */
  qps?: number;
  burst?: number;
  userAgent?: string;
  observe?: RequestObserver;
  observeIntent?: IntentObserver;
}

/** How often a client whose server stopped answering asks /readyz whether it is back. */
const PROBE_INTERVAL_MS = 2_000;

/**
 * For this long after a server that was away answers again, a retry waits at most
 * WARM_UP_RETRY_MS. A restarting kube-apiserver answers before it serves every client: it fails
 * (500), knows no custom resource (404) and refuses ServiceAccounts (403) for seconds while its
 * caches fill, and its /readyz turns 200 later than some clients are served (in the outage test
 * here, daemons woken by it wrote their results 1.4 s after the manager's account was served
 * again). So the first
 * answer wakes every held-back retry, and those that meet the warm-up go again within a second
 * instead of doubling their backoff; the outage test's job once completed 10.05 s after the
 * server's return on CI, when only /readyz's 200 woke retries.
 */
const WARM_UP_MS = 30_000;
const WARM_UP_RETRY_MS = 1_000;

/** How often a 429 (or 503 with Retry-After) is retried after the server's delay. */
const MAX_THROTTLE_RETRIES = 10;

/** "list", "get", "watch", "create", ... and "pods", "nodeimages/status", ... for metrics and logs. */
export function describeRequest(
  method: string,
  path: string,
  query: Query | undefined,
): { verb: string; resource: string; group: string; namespace: string | undefined; name: string | undefined } {
  const segs = path.split('?')[0]?.split('/').filter((s) => s !== '') ?? [];
  // /api/v1/... or /apis/group/version/...
  const group = segs[0] === 'api' ? '' : (segs[1] ?? '');
  let rest = segs[0] === 'api' ? segs.slice(2) : segs.slice(3);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 2) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  // A group's or version's discovery document is no resource: resource '' (every authenticated
  // user may read it, through the system:discovery role).
  if (rest.length === 0) return { verb: 'get', resource: '', group, namespace: undefined, name: undefined };
  const resource = rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? '');
  const item = rest.length >= 2;
  const watch = query?.['watch'] === true || query?.['watch'] === 'true' || query?.['watch'] === 1;
  const verb =
    method === 'GET'
      ? watch
        ? 'watch'
        : item
          ? 'get'
          : 'list'
      : ({ POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<string, string>)[method] ?? method.toLowerCase();
  return { verb, resource, group, namespace, name: item ? rest[1] : undefined };
}

function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * The one door to the API server: authentication and TLS from a ClusterAccess, one
 * keep-alive connection pool, a client-side rate limit, throttling retries and request metrics.
 */
export class RestClient {
  private readonly server: URL;
  private readonly agent: https.Agent;
  private readonly limiter: TokenBucket;
  private readonly userAgent: string;
  private readonly observe: RequestObserver | undefined;
  private readonly observeIntent: IntentObserver | undefined;
  /** A request found no server (connection refused, reset, no answer) and it has not answered since. */
  private unreachable = false;
  private probe: NodeJS.Timeout | undefined;
  private probing = false;
  /** When the server last answered again after an outage. */
  private backAt = -Infinity;
  private readonly serverBackListeners = new Set<() => void>();
  private closed = false;

  constructor(
    readonly access: ClusterAccess,
    opts: RestClientOptions = {},
  ) {
    this.server = new URL(access.server);
    this.limiter = new TokenBucket(opts.qps ?? 50, opts.burst ?? 100);
    this.userAgent = opts.userAgent ?? 'kruise-ts';
    this.observe = opts.observe;
    this.observeIntent = opts.observeIntent;
    this.agent = new https.Agent({
      keepAlive: true,
      keepAliveMsecs: 30_000,
      ca: access.ca,
      cert: access.cert,
      key: access.key,
      rejectUnauthorized: access.insecureSkipTlsVerify !== true,
    });
  }

  /** Closes pooled connections; the client must not be used afterwards. */
  close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.probe);
    this.agent.destroy();
    return Promise.resolve();
  }

  /**
   * Waits out a retry backoff: `ms`, or less when the server, after failing to answer, answers
   * again (a request of this client got an answer, or its /readyz probe did), and at most
   * WARM_UP_RETRY_MS while it warms up afterwards. Retries held back by an outage go out as soon as
   * it ends, not at the end of a 30 s backoff. Resolves true when woken by the server's return.
   */
  backoff(ms: number, signal?: AbortSignal): Promise<boolean> {
    const wait = this.retryDelayMs(ms);
    return new Promise<boolean>((resolve) => {
      let unsubscribe = (): void => undefined;
      const done = (woken: boolean): void => {
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', onAbort);
        resolve(woken);
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), wait);
      if (signal?.aborted) return done(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (this.unreachable) unsubscribe = this.onServerBack(() => done(true));
    });
  }

  /**
   * A retry's backoff `ms`, shortened while the server warms up after an outage (WARM_UP_MS), to
   * between half of WARM_UP_RETRY_MS and all of it: thousands of daemons back at once do not retry
   * in step.
   */
  retryDelayMs(ms: number): number {
    return Date.now() - this.backAt < WARM_UP_MS ? Math.min(ms, WARM_UP_RETRY_MS * (0.5 + Math.random() / 2)) : ms;
  }

  /** Calls `listener` each time the server answers again after an outage; returns the unsubscribe. */
  onServerBack(listener: () => void): () => void {
    this.serverBackListeners.add(listener);
    return () => void this.serverBackListeners.delete(listener);
  }

  /** An HTTP answer to a request of this client, whatever its status: the server is back. */
  private answered(): void {
    if (this.unreachable) this.serverBack();
  }

  private serverBack(): void {
    this.unreachable = false;
    this.backAt = Date.now();
    clearTimeout(this.probe);
    this.probe = undefined;
    // A copy: backoff() waiters unsubscribe while they are called.
    for (const l of [...this.serverBackListeners]) l();
  }

  /** No answer at all: probe until the server answers again. */
  private unanswered(): void {
    if (this.unreachable || this.closed) return;
    this.unreachable = true;
    this.scheduleProbe();
  }

  /** One probe at a time, PROBE_INTERVAL_MS after the last found no server. */
  private scheduleProbe(): void {
    if (this.closed || this.probing || this.probe !== undefined) return;
    this.probe = setTimeout(() => {
      this.probe = undefined;
      this.probing = true;
      this.open('GET', '/readyz', { timeoutMs: PROBE_INTERVAL_MS }).then(
        (res) => {
          res.resume();
          this.probing = false;
          this.answered();
        },
        () => {
          this.probing = false;
          if (this.unreachable) this.scheduleProbe();
        },
      );
    }, PROBE_INTERVAL_MS);
    this.probe.unref();
  }

  private async headers(): Promise<Record<string, string>> {
    return { 'User-Agent': this.userAgent, Accept: 'application/json', ...(await this.access.headers()) };
  }

  private async open(method: string, path: string, opts: RequestOptions): Promise<IncomingMessage> {
    const agent = this.agent;
    const headers = await this.headers();
    const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    if (payload) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return new Promise<IncomingMessage>((resolve, reject) => {
      // Aborted before the request exists (a watch restarting while its owner stops): no request.
      if (opts.signal?.aborted) return reject(new Error('aborted'));
      const req = https.request(
        {
          protocol: this.server.protocol,
          hostname: this.server.hostname,
          port: this.server.port,
          path: `${this.server.pathname.replace(/\/$/, '')}${path}${encodeQuery(opts.query)}`,
          method,
          headers,
          agent,
          ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}),
        },
        (res) => {
          // Aborting tears the response down quietly: readers see the stream end, callers the signal.
          if (signal) {
            const onAbort = (): void => {
              res.destroy();
            };
            signal.addEventListener('abort', onAbort, { once: true });
            res.once('close', () => signal.removeEventListener('abort', onAbort));
          }
          resolve(res);
        },
      );
      const signal = opts.signal;
      const onAbort = (): void => {
        req.destroy();
        reject(new Error('aborted'));
      };
      // Every error of the request settles the promise (later ones, after the answer, are no-ops).
      req.on('error', reject);
      if (signal) {
        signal.addEventListener('abort', onAbort, { once: true });
        req.once('response', () => signal.removeEventListener('abort', onAbort));
        req.once('error', () => signal.removeEventListener('abort', onAbort));
      }
      req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
      req.end(payload);
    });
  }

  private static async readAll(res: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  private static errorFrom(status: number, text: string, verb: string, path: string, retryAfter: string | undefined): ApiError {
    let body: StatusBody;
    try {
      body = JSON.parse(text) as StatusBody;
    } catch {
      body = { message: text.trim().slice(0, 500) };
    }
    const ra = retryAfter !== undefined ? Number(retryAfter) : body.details?.retryAfterSeconds;
    // A body that is no Status (a bare "404 page not found") has no reason: the HTTP one stands in
    // ("Not Found", never Kubernetes' "NotFound", so objectNotFound stays false for it).
    return new ApiError(status, body.reason ?? STATUS_CODES[status] ?? 'Unknown', body.message ?? '', verb, path, Number.isFinite(ra) ? ra : undefined);
  }

  /**
   * Declares a request this code makes only on a path that timing decides (a conflict's re-read, an
   * event's aggregation), without making it: the access log records it as if it had been made, so
   * the RBAC check (hack/check-rbac.ts) covers it whether or not a test run happened to take it.
   */
  intend(method: string, path: string): void {
    if (this.observeIntent === undefined) return;
    const { verb, resource, group, namespace, name } = describeRequest(method, path, undefined);
    this.observeIntent(verb, resource, { group, namespace, name });
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const text = await this.exchange(method, path, opts, RestClient.readAll);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /**
   * A list, its items handed to `onItem` one by one as they arrive, and its metadata returned. A
   * list of every NodeImage is the biggest answer the manager gets (176 MB of JSON at 5,000 nodes
   * and 50 tags each): read whole, it is one string and its whole parse at once, beside the cache
   * it is to replace, and past 512 MiB it is no string at all (V8's longest). Streamed, what it
   * holds at a time is one item.
   */
  listEach<T>(path: string, opts: RequestOptions, onItem: (item: T) => void): Promise<ListMeta> {
    return this.exchange('GET', path, opts, (res) => RestClient.streamList(res, onItem));
  }

  /**
   * One call under the budget: a 2xx body goes to `read`, anything else becomes an ApiError; 429s
   * (and 503s with Retry-After) are retried after the wait the server asks for.
   */
  private async exchange<R>(method: string, path: string, opts: RequestOptions, read: (res: IncomingMessage) => Promise<R>): Promise<R> {
    const { verb, resource, group, namespace, name } = describeRequest(method, path, opts.query);
    const where = { group, namespace, name };
    // Events are best effort: under a tight budget (the daemon's 5 QPS) they wait for everything else.
    const priority = opts.priority ?? (resource === 'events' ? 'low' : 'normal');
    for (let attempt = 0; ; attempt++) {
      await this.limiter.take(priority);
      const t0 = performance.now();
      let status = 0;
      let body: { ok: R } | { text: string; retryAfter: string | undefined };
      try {
        const res = await this.open(method, path, opts);
        status = res.statusCode ?? 0;
        body = status >= 200 && status < 300 ? { ok: await read(res) } : { text: await RestClient.readAll(res), retryAfter: res.headers['retry-after'] as string | undefined };
      } catch (err) {
        const malformed = err instanceof MalformedBody && !opts.signal?.aborted;
        this.observe?.(verb, resource, malformed ? status : 0, (performance.now() - t0) / 1000, where);
        if (opts.signal?.aborted) throw err;
        if (malformed) {
          this.answered();
          throw new ApiError(status, 'MalformedBody', err.message, verb, path, undefined, { cause: err.cause });
        }
        this.unanswered();
        throw new ApiError(0, 'Unavailable', (err as Error).message, verb, path, undefined, { cause: err });
      }
      this.answered();
      this.observe?.(verb, resource, status, (performance.now() - t0) / 1000, where);
      if ('ok' in body) return body.ok;
      const err = RestClient.errorFrom(status, body.text, verb, path, body.retryAfter);
      const throttled = status === 429 || (status === 503 && err.retryAfterSeconds !== undefined);
      if (!throttled || attempt >= MAX_THROTTLE_RETRIES || opts.signal?.aborted) throw err;
      await new Promise((r) => setTimeout(r, Math.min(30, Math.max(1, err.retryAfterSeconds ?? 1)) * 1000));
    }
  }

  /** Splits a list as it streams in: each item is handed on, the list's metadata returned. */
  private static async streamList<T>(res: IncomingMessage, onItem: (item: T) => void): Promise<ListMeta> {
    const splitter = new ListSplitter((item) => onItem(item as T));
    // A connection lost mid-body throws from the loop itself: no answer, not a malformed one.
    const malformed = <R>(step: () => R): R => {
      try {
        return step();
      } catch (err) {
        res.destroy();
        throw new MalformedBody(err);
      }
    };
    for await (const chunk of res) malformed(() => splitter.write(chunk as Buffer));
    return malformed(() => splitter.end());
  }

  /**
   * Streams a watch. Resolves when the server ends the stream (timeoutSeconds) or the signal aborts;
   * rejects with ApiError when the watch cannot start or the connection breaks.
   */
  async watch<T>(path: string, query: Query, onEvent: (ev: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const { verb, resource, group, namespace, name } = describeRequest('GET', path, { ...query, watch: true });
    const where = { group, namespace, name };
    await this.limiter.take();
    const t0 = performance.now();
    let res: IncomingMessage;
    try {
      res = await this.open('GET', path, { query: { ...query, watch: true }, signal });
    } catch (err) {
      this.observe?.(verb, resource, 0, (performance.now() - t0) / 1000, where);
      if (signal.aborted) return;
      this.unanswered();
      throw new ApiError(0, 'Unavailable', (err as Error).message, verb, path, undefined, { cause: err });
    }
    const status = res.statusCode ?? 0;
    this.answered();
    this.observe?.(verb, resource, status, (performance.now() - t0) / 1000, where);
    if (status !== 200) {
      throw RestClient.errorFrom(status, await RestClient.readAll(res), verb, path, res.headers['retry-after'] as string | undefined);
    }
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const finish = (err?: unknown): void => {
        if (settled) return;
        settled = true;
        if (err && !signal.aborted) reject(new ApiError(0, 'StreamBroken', (err as Error).message, verb, path, undefined, { cause: err }));
        else resolve();
      };
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      lines.on('line', (line) => {
        if (line.trim() === '') return;
        let ev: WatchEvent<T>;
        try {
          ev = JSON.parse(line) as WatchEvent<T>;
        } catch (err) {
          res.destroy(err as Error);
          return;
        }
        onEvent(ev);
      });
      res.on('error', finish);
      // readline re-emits its input's errors on the interface itself.
      lines.on('error', finish);
      res.on('aborted', () => finish(new Error('connection closed mid-stream')));
      res.on('close', () => (res.complete ? finish() : finish(new Error('connection closed mid-stream'))));
      lines.on('close', () => {
        if (res.complete) finish();
      });
    });
  }
}
