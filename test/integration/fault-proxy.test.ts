import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { BARE_NOT_FOUND, EXPIRED_WATCH_EVENT, FaultProxy } from '../proxy/fault-proxy.js';
import { testEnv } from '../helpers/env.js';
import type { TestEnv } from '../helpers/env.js';

interface ClusterEnv extends TestEnv {
  kubeconfig: string;
  apiServer: string;
}

const env = testEnv() as ClusterEnv;
const pki = join(env.envDir, 'kube', 'pki');
const proxyFiles = { certFile: join(pki, 'apiserver.crt'), keyFile: join(pki, 'apiserver.key'), caFile: join(pki, 'ca.crt') };

interface WatchEvent {
  type: string;
  object: { kind?: string; code?: number; reason?: string; metadata?: { name?: string } };
}

interface Ended {
  complete: boolean;
  error?: string;
}

/** A raw chunked watch, read the way a client does: newline-delimited JSON events. */
interface RawWatch {
  status: number;
  events: WatchEvent[];
  ended: Promise<Ended>;
  waitFor(pred: (ev: WatchEvent) => boolean, timeoutMs?: number): Promise<WatchEvent>;
  close(): void;
}

/** Stream ends are awaited with a bound, so a fault that fails to break a stream fails the test quickly. */
function within<T>(p: Promise<T>, ms = 5000, what = 'the watch to end'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms}ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** A request for `path` to the server `kc` names, with its credentials. */
async function requestOptions(kc: KubeConfig, path: string): Promise<https.RequestOptions> {
  const server = new URL(kc.getCurrentCluster()?.server ?? '');
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  return { ...opts, hostname: server.hostname, port: server.port, path, method: 'GET' };
}

async function openWatch(kc: KubeConfig, path: string): Promise<RawWatch> {
  const req = https.request(await requestOptions(kc, path));
  req.on('error', () => undefined);
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
  const events: WatchEvent[] = [];
  const listeners = new Set<() => void>();
  let buf = '';
  let error: string | undefined;
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) events.push(JSON.parse(line) as WatchEvent);
    }
    for (const l of [...listeners]) l();
  });
  res.on('error', (e) => (error = e.message));
  const ended = new Promise<Ended>((resolve) => res.on('close', () => resolve({ complete: res.complete, ...(error !== undefined ? { error } : {}) })));
  return {
    status: res.statusCode ?? 0,
    events,
    ended,
    close: () => req.destroy(),
    waitFor: (pred, timeoutMs = 10_000) =>
      new Promise<WatchEvent>((resolve, reject) => {
        const check = (): void => {
          const ev = events.find(pred);
          if (!ev) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(ev);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no matching watch event within ${timeoutMs}ms; got ${JSON.stringify(events)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      }),
  };
}

interface RawAnswer {
  status: number | undefined;
  contentType: string | undefined;
  body: string;
}

/** A GET as kubeconfig `kc` sends it, answered as it came: status, content type and body text. */
async function rawGet(kc: KubeConfig, path: string): Promise<RawAnswer> {
  const opts = await requestOptions(kc, path);
  return new Promise<RawAnswer>((resolve, reject) => {
    const req = https.request(opts, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, contentType: res.headers['content-type'], body: body.trim() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Namespaced podtemplates watches open on the apiserver itself, from its own gauge. Nothing else in this
 * environment watches podtemplates per namespace, so the count shows whether the proxy released its
 * upstream side.
 */
async function upstreamPodTemplateWatches(kc: KubeConfig): Promise<number> {
  const text = (await rawGet(kc, '/metrics')).body;
  const line = text
    .split('\n')
    .find((l) => l.startsWith('apiserver_longrunning_gauge{') && l.includes('resource="podtemplates"') && l.includes('scope="namespace"') && l.includes('verb="WATCH"'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function withServer(src: KubeConfig, server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: src.clusters.map((c) => ({ ...c, server })),
    users: src.users,
    contexts: src.contexts,
    currentContext: src.getCurrentContext(),
  });
  return kc;
}

async function settle<T>(p: Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    const value = await p;
    return { value, ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
}

/** client-node hands back the body of a status it has no model for as the raw text. */
function statusBody(e: unknown): unknown {
  expect(e).toBeInstanceOf(ApiException);
  const body = (e as ApiException<unknown>).body;
  return typeof body === 'string' ? JSON.parse(body) : body;
}

function errorCode(e: unknown): string | undefined {
  let cur: unknown = e;
  // node-fetch wraps the socket error; the code is on it or on its cause.
  for (let i = 0; i < 4 && typeof cur === 'object' && cur !== null; i++) {
    const c = (cur as { code?: unknown }).code;
    if (typeof c === 'string') return c;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

describe('FaultProxy against the real apiserver', () => {
  const namespace = `test-${randomBytes(4).toString('hex')}`;
  const direct = new KubeConfig();
  direct.loadFromFile(env.kubeconfig);
  const directCore = direct.makeApiClient(CoreV1Api);
  let proxy: FaultProxy;
  let kc: KubeConfig;
  let core: CoreV1Api;

  async function listRv(): Promise<string> {
    const list = await directCore.listNamespacedConfigMap({ namespace });
    return list.metadata?.resourceVersion ?? '';
  }

  async function createConfigMap(name: string): Promise<void> {
    await directCore.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { k: name } } });
  }

  beforeAll(async () => {
    proxy = await FaultProxy.start({ upstream: env.apiServer, ...proxyFiles });
    kc = proxy.loadKubeConfig(env.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    await directCore.createNamespace({ body: { metadata: { name: namespace } } });
  });

  afterAll(async () => {
    await proxy?.stop();
    await directCore.deleteNamespace({ name: namespace }).catch(() => undefined);
  });

  beforeEach(() => {
    proxy.reset();
    proxy.clearLog();
  });

  it('passes requests through unchanged, credentials included', async () => {
    expect(kc.getCurrentCluster()?.server).toBe(proxy.url);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain(namespace);

    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'passthrough' }, data: { greeting: 'hello' } } });
    expect(created.metadata?.uid).toBeTruthy();
    const got = await core.readNamespacedConfigMap({ namespace, name: 'passthrough' });
    expect(got.data).toEqual({ greeting: 'hello' });
    expect(got.metadata?.uid).toBe(created.metadata?.uid);
    // The object is really on the server, not an artefact of the proxy.
    const viaDirect = await directCore.readNamespacedConfigMap({ namespace, name: 'passthrough' });
    expect(viaDirect.metadata?.uid).toBe(created.metadata?.uid);

    expect(proxy.requests().map((r) => [r.method, r.path, r.status])).toEqual([
      ['GET', '/api/v1/namespaces', 200],
      ['POST', `/api/v1/namespaces/${namespace}/configmaps`, 201],
      ['GET', `/api/v1/namespaces/${namespace}/configmaps/passthrough`, 200],
    ]);

    // The kubeconfig file written for other processes works the same way.
    const fromFile = new KubeConfig();
    fromFile.loadFromFile(proxy.kubeconfig(env.kubeconfig));
    expect(fromFile.getCurrentCluster()?.server).toBe(proxy.url);
    const again = await fromFile.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace, name: 'passthrough' });
    expect(again.data).toEqual({ greeting: 'hello' });
    expect(proxy.count()).toBe(4);
  });

  it('answers 429 with Retry-After and a TooManyRequests Status, once, for matching requests only', async () => {
    const fault = proxy.failNext({ status: 429, retryAfterSeconds: 3, match: { method: 'GET', path: /\/configmaps$/ } });
    // Not matched: other paths go through untouched.
    await core.listNamespace();
    expect(fault.remaining).toBe(1);

    const r = await settle(core.listNamespacedConfigMap({ namespace }));
    expect(r.error).toBeInstanceOf(ApiException);
    const err = r.error as ApiException<unknown>;
    expect(err.code).toBe(429);
    expect(err.headers['retry-after']).toBe('3');
    expect(statusBody(err)).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'TooManyRequests', code: 429, details: { retryAfterSeconds: 3 } });
    expect(fault).toMatchObject({ remaining: 0, consumed: 1 });

    const ok = await core.listNamespacedConfigMap({ namespace });
    expect(Array.isArray(ok.items)).toBe(true);
    expect(proxy.requests().map((e) => [e.path, e.status, e.fault])).toEqual([
      ['/api/v1/namespaces', 200, undefined],
      [`/api/v1/namespaces/${namespace}/configmaps`, 429, 'fail'],
      [`/api/v1/namespaces/${namespace}/configmaps`, 200, undefined],
    ]);
  });

  it('answers 500 as many times as asked, and a cleared fault stops applying', async () => {
    proxy.failNext({ status: 500, times: 2, match: { path: /\/configmaps/ } });
    for (let i = 0; i < 2; i++) {
      const r = await settle(core.listNamespacedConfigMap({ namespace }));
      expect((r.error as ApiException<unknown>).code).toBe(500);
      expect(statusBody(r.error)).toMatchObject({ reason: 'InternalError', code: 500 });
    }
    await expect(core.listNamespacedConfigMap({ namespace })).resolves.toHaveProperty('items');

    const pending = proxy.failNext({ status: 409, times: Infinity, match: { method: 'POST' } });
    const conflict = await settle(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'never' } } }));
    expect(statusBody(conflict.error)).toMatchObject({ reason: 'Conflict', code: 409 });
    pending.clear();
    await expect(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'after-clear' } } })).resolves.toHaveProperty('metadata.name', 'after-clear');
    // The injected 409 never reached the server.
    const never = await settle(directCore.readNamespacedConfigMap({ namespace, name: 'never' }));
    expect((never.error as ApiException<unknown>).code).toBe(404);
    expect(proxy.count({ status: 500 })).toBe(2);
  });

  it("answers BARE_NOT_FOUND as the real apiserver answers a path it does not serve: no Status, plain text", async () => {
    const unserved = '/apis/apps.kruise.io/v1beta1/nodeimagesnotserved';
    const real = await rawGet(direct, unserved);
    expect(real).toEqual({ status: 404, contentType: expect.stringMatching(/^text\/plain/), body: BARE_NOT_FOUND.body });
    proxy.failNext({ ...BARE_NOT_FOUND, match: { path: /\/nodes\/absent$/ } });
    expect(await rawGet(kc, '/api/v1/nodes/absent')).toEqual(real);
  });

  it('expires the next watch with the 410 ERROR event a real apiserver sends, then ends the stream', async () => {
    const rv = await listRv();
    const path = `/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=60`;
    proxy.expireWatches();
    // A plain list is not a watch and is not expired.
    await core.listNamespacedConfigMap({ namespace });

    const expired = await openWatch(kc, path);
    expect(expired.status).toBe(200);
    await expect(within(expired.ended)).resolves.toEqual({ complete: true });
    expect(expired.events).toEqual([EXPIRED_WATCH_EVENT]);
    expect(expired.events[0]).toEqual({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 },
    });

    // Only one was asked for: the next watch is real and sees real events.
    const real = await openWatch(kc, path);
    try {
      await createConfigMap('after-expiry');
      const ev = await real.waitFor((e) => e.object.metadata?.name === 'after-expiry');
      expect(ev.type).toBe('ADDED');
    } finally {
      real.close();
    }
    expect(proxy.requests().filter((e) => e.watch).map((e) => e.fault)).toEqual(['expire', undefined]);
  });

  it('cutWatches() breaks open watches mid-stream on both sides', async () => {
    const baseline = await upstreamPodTemplateWatches(direct);
    const rv = await listRv();
    const watch = await openWatch(kc, `/api/v1/namespaces/${namespace}/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=60`);
    const templates = await openWatch(kc, `/api/v1/namespaces/${namespace}/podtemplates?watch=true&timeoutSeconds=60`);
    await createConfigMap('before-cut');
    await watch.waitFor((e) => e.object.metadata?.name === 'before-cut');
    await eventually(async () => (await upstreamPodTemplateWatches(direct)) === baseline + 1, 'the apiserver to hold the watch');

    expect(proxy.count({ watch: true, active: true })).toBe(2);
    const t0 = performance.now();
    expect(proxy.cutWatches()).toBe(2);
    const ended = await within(watch.ended);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(ended.complete).toBe(false);
    expect((await within(templates.ended)).complete).toBe(false);
    expect(watch.events).toHaveLength(1);
    expect(proxy.count({ watch: true, active: true })).toBe(0);
    expect(proxy.requests().filter((e) => e.watch)).toEqual([
      expect.objectContaining({ fault: 'cut', status: 200, error: 'cut by fault proxy' }),
      expect.objectContaining({ fault: 'cut', status: 200, error: 'cut by fault proxy' }),
    ]);
    // The upstream side is gone too: the apiserver no longer serves that watch.
    await eventually(async () => (await upstreamPodTemplateWatches(direct)) === baseline, 'the apiserver to release the watch');
    // Nothing is left to cut, and non-watch traffic is unaffected.
    expect(proxy.cutWatches()).toBe(0);
    await expect(core.listNamespacedConfigMap({ namespace })).resolves.toHaveProperty('items');
  });

  it('delays new requests while a delay is set', async () => {
    proxy.delay(800);
    const slow = await settle(core.readNamespace({ name: namespace }));
    expect(slow.error).toBeUndefined();
    expect(slow.ms).toBeGreaterThanOrEqual(780);
    expect(proxy.requests()[0]).toMatchObject({ delayedMs: 800, status: 200 });

    proxy.delay(0);
    const fast = await settle(core.readNamespace({ name: namespace }));
    expect(fast.error).toBeUndefined();
    expect(fast.ms).toBeLessThan(500);
  });

  it('refuseConnections() fails requests fast and drops open connections until acceptConnections()', async () => {
    const rv = await listRv();
    const watch = await openWatch(kc, `/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=60`);
    const refusedBefore = proxy.refusedConnections;

    proxy.refuseConnections();
    expect((await within(watch.ended)).complete).toBe(false);
    const down = await settle(core.listNamespace());
    expect(down.error).toBeDefined();
    expect(down.error).not.toBeInstanceOf(ApiException);
    expect(errorCode(down.error)).toMatch(/ECONNRESET|EPIPE/);
    expect(down.ms).toBeLessThan(2000);
    expect(proxy.refusedConnections).toBeGreaterThan(refusedBefore);

    proxy.acceptConnections();
    await expect(core.listNamespace()).resolves.toHaveProperty('items');

    // A timed outage ends by itself.
    proxy.refuseConnections(400);
    expect((await settle(core.readNamespace({ name: namespace }))).error).toBeDefined();
    await new Promise((r) => setTimeout(r, 500));
    await expect(core.readNamespace({ name: namespace })).resolves.toHaveProperty('metadata.name', namespace);
  });

  it('logs every request and counts them by verb, path and watch', async () => {
    const rv = await listRv();
    const before = Date.now();
    await core.listNamespacedConfigMap({ namespace });
    await core.listNamespacedConfigMap({ namespace, labelSelector: 'app=x' });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'counted' } } });
    await core.readNamespacedConfigMap({ namespace, name: 'counted' });
    proxy.expireWatches();
    const w = await openWatch(kc, `/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${rv}`);
    await within(w.ended);

    expect(proxy.count()).toBe(5);
    expect(proxy.count({ method: 'GET', pathRegex: /\/configmaps$/, watch: false })).toBe(2);
    expect(proxy.count({ method: 'get', watch: true })).toBe(1);
    expect(proxy.count({ method: 'POST' })).toBe(1);
    expect(proxy.count({ status: 201 })).toBe(1);
    expect(proxy.count({ pathRegex: /\/configmaps\/counted$/ })).toBe(1);
    expect(proxy.count({ method: 'DELETE' })).toBe(0);
    const log = proxy.requests();
    expect(log[1]?.query).toEqual({ labelSelector: 'app=x' });
    expect(log[4]).toMatchObject({ method: 'GET', watch: true, query: { watch: 'true', resourceVersion: rv }, status: 200 });
    for (const e of log) {
      expect(e.at).toBeGreaterThanOrEqual(before);
      expect(e.endedAt).not.toBeNull();
    }
    proxy.clearLog();
    expect(proxy.count()).toBe(0);
  });

  it('keeps client connections alive across forwarded and injected responses', async () => {
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: opts.ca });
    const get = (path: string): Promise<{ status: number; socket: unknown }> =>
      new Promise((resolve, reject) => {
        const req = https.request({ hostname: '127.0.0.1', port: new URL(proxy.url).port, path, headers: opts.headers, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      proxy.failNext({ status: 500, match: { path: /^\/version$/ } });
      const answers = [await get('/api/v1/namespaces'), await get('/version'), await get('/version')];
      expect(answers.map((a) => a.status)).toEqual([200, 500, 200]);
      expect(new Set(answers.map((a) => a.socket)).size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('a client that hangs up mid-watch releases the upstream request', async () => {
    const baseline = await upstreamPodTemplateWatches(direct);
    const watch = await openWatch(kc, `/api/v1/namespaces/${namespace}/podtemplates?watch=true&timeoutSeconds=60`);
    expect(proxy.count({ watch: true, active: true })).toBe(1);
    await eventually(async () => (await upstreamPodTemplateWatches(direct)) === baseline + 1, 'the apiserver to hold the watch');
    watch.close();
    await proxy.waitForCount({ watch: true, active: false }, 1, 5000);
    expect(proxy.requests()[0]).toMatchObject({ watch: true, error: 'client closed the connection' });
    await eventually(async () => (await upstreamPodTemplateWatches(direct)) === baseline, 'the apiserver to release the watch');
  });

  it('relays upgraded (websocket) connections', async () => {
    const rv = await listRv();
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const req = https.request({
      ...opts,
      hostname: '127.0.0.1',
      port: new URL(proxy.url).port,
      path: `/api/v1/namespaces/${namespace}/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=60`,
      headers: {
        ...opts.headers,
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        Origin: proxy.url,
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
      },
    });
    req.on('error', () => undefined);
    const [res, socket] = await within(new Promise<[IncomingMessage, net.Socket]>((resolve, reject) => {
      req.once('upgrade', (r: IncomingMessage, s: net.Socket) => resolve([r, s]));
      req.once('response', (r: IncomingMessage) => reject(new Error(`no upgrade: HTTP ${r.statusCode}`)));
      req.once('error', reject);
      req.end();
    }), 10_000, 'the upgrade');
    try {
      expect(res.statusCode).toBe(101);
      const received: Buffer[] = [];
      const sawEvent = new Promise<void>((resolve) =>
        socket.on('data', (d: Buffer) => {
          received.push(d);
          if (Buffer.concat(received).includes('"name":"over-websocket"')) resolve();
        }),
      );
      await createConfigMap('over-websocket');
      await within(sawEvent, 10_000, 'the ADDED event over the websocket');
      expect(Buffer.concat(received).toString('latin1')).toContain('"type":"ADDED"');
      expect(proxy.requests()[0]).toMatchObject({ upgrade: true, watch: true, status: 101 });
    } finally {
      socket.destroy();
    }
  });

  it('turns an unreachable upstream into 502 and stop() closes every open connection', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));

    const dead = await FaultProxy.start({ upstream: `https://127.0.0.1:${deadPort}`, ...proxyFiles });
    try {
      const r = await settle(withServer(direct, dead.url).makeApiClient(CoreV1Api).listNamespace());
      expect((r.error as ApiException<unknown>).code).toBe(502);
      expect(statusBody(r.error)).toMatchObject({ kind: 'Status', code: 502, message: expect.stringContaining('ECONNREFUSED') });
      expect(dead.requests()[0]).toMatchObject({ status: 502, fault: 'upstream-error' });
    } finally {
      await dead.stop();
    }

    const second = await FaultProxy.start({ upstream: env.apiServer, ...proxyFiles });
    const watch = await openWatch(second.loadKubeConfig(env.kubeconfig), `/api/v1/namespaces/${namespace}/configmaps?watch=true&timeoutSeconds=60`);
    const t0 = performance.now();
    await second.stop();
    expect(performance.now() - t0).toBeLessThan(2000);
    expect((await within(watch.ended)).complete).toBe(false);
    const after = await settle(withServer(direct, second.url).makeApiClient(CoreV1Api).listNamespace());
    expect(errorCode(after.error)).toBe('ECONNREFUSED');
  });
});
