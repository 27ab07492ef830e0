import { Informer, REFRESH_WATCH_SECONDS, type Index } from '../../kube/informer.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import type { FaultProxy } from '../proxy/fault-proxy.js';
import { createNamespace, deleteNamespace, eventually, restClient, startProxy } from '../helpers/kube.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}
const direct = restClient();
const cms = new Resource<ConfigMap>(direct, core.configmaps);
let ns = '';
let proxy: FaultProxy;

beforeAll(async () => {
  ns = await createNamespace(direct, 'informer');
  proxy = await startProxy();
});
afterAll(async () => {
  await proxy.stop();
  await deleteNamespace(direct, ns);
});
afterEach(() => proxy.reset());

interface Recorded {
  added: string[];
  updated: string[];
  deleted: string[];
}

const byColor: Index<ConfigMap> = { name: 'byColor', keys: (o) => (o.metadata?.labels?.['color'] ? [o.metadata.labels['color']] : []) };

function informer(opts: { label?: string; field?: string; viaProxy?: boolean; fromCache?: boolean; pageSize?: number; backoffMinMs?: number; sheddingBackoffMaxMs?: number; resumeWithinMs?: number; refreshVersionAfterMs?: number } = {}): { inf: Informer<ConfigMap>; seen: Recorded; stop: () => void } {
  const rest = opts.viaProxy ? restClient(proxy.url) : direct;
  const inf = new Informer<ConfigMap>(new Resource(rest, core.configmaps), {
    namespace: ns,
    ...(opts.label ? { labelSelector: opts.label } : {}),
    ...(opts.field ? { fieldSelector: opts.field } : {}),
    backoffMinMs: opts.backoffMinMs ?? 100,
    backoffMaxMs: Math.max(1000, 8 * (opts.backoffMinMs ?? 100)),
    ...(opts.sheddingBackoffMaxMs !== undefined ? { sheddingBackoffMaxMs: opts.sheddingBackoffMaxMs } : {}),
    ...(opts.resumeWithinMs !== undefined ? { resumeWithinMs: opts.resumeWithinMs } : {}),
    ...(opts.refreshVersionAfterMs !== undefined ? { refreshVersionAfterMs: opts.refreshVersionAfterMs } : {}),
    ...(opts.fromCache ? { listFromWatchCache: true, minWatchTimeoutSeconds: 600 } : {}),
    ...(opts.pageSize !== undefined ? { listPageSize: opts.pageSize } : {}),
  }).addIndex(byColor);
  const seen: Recorded = { added: [], updated: [], deleted: [] };
  inf.on({
    add: (o) => seen.added.push(o.metadata?.name ?? ''),
    update: (_o, n) => seen.updated.push(n.metadata?.name ?? ''),
    delete: (o) => seen.deleted.push(o.metadata?.name ?? ''),
  });
  const ac = new AbortController();
  void inf.run(ac.signal);
  return { inf, seen, stop: () => ac.abort() };
}

const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}): ConfigMap => ({
  metadata: { name, namespace: ns, labels },
  data,
});

describe('Informer on the real API server', () => {
  it('a watch asked for after its stop signal ends quietly (no request, no stray socket error)', async () => {
    const ac = new AbortController();
    ac.abort();
    const events: unknown[] = [];
    await expect(direct.watch(`/api/v1/namespaces/${ns}/configmaps`, {}, (e) => events.push(e), ac.signal)).resolves.toBeUndefined();
    // A request destroyed before it had an error listener failed the process a tick later.
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toEqual([]);
    // Stopping informers right after starting them, many times: the CLI's and the binaries' shutdown.
    for (let i = 0; i < 20; i++) {
      const { inf, stop } = informer();
      if (i % 2 === 0) await inf.synced;
      stop();
    }
    await new Promise((r) => setTimeout(r, 300));
  });

  it('stopped while it lists, it ends without starting a watch', async () => {
    await cms.create(cm('s1', { suite: 'stopped' }));
    const ac = new AbortController();
    const inf = new Informer<ConfigMap>(new Resource(restClient(proxy.url), core.configmaps), { namespace: ns, labelSelector: 'suite=stopped' });
    // Stopped from a handler, which runs inside the list: as whoever awaits `synced` may stop it.
    inf.on({ add: () => ac.abort() });
    const t0 = Date.now();
    await inf.run(ac.signal);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(inf.keys()).toEqual([`${ns}/s1`]);
    expect(proxy.requests().filter((r) => r.watch && r.query['labelSelector'] === 'suite=stopped')).toEqual([]);
  });

  it('lists, signals synced, then follows adds, updates and deletes, with indexes', async () => {
    await cms.create(cm('a1', { suite: 'basic', color: 'red' }));
    await cms.create(cm('a2', { suite: 'basic', color: 'blue' }));
    const { inf, seen, stop } = informer({ label: 'suite=basic' });
    try {
      await inf.synced;
      expect(inf.hasSynced()).toBe(true);
      expect(inf.keys().sort()).toEqual([`${ns}/a1`, `${ns}/a2`]);
      await cms.create(cm('a3', { suite: 'basic', color: 'red' }));
      await cms.create(cm('other', { suite: 'nope' }));
      await cms.patch(ns, 'a1', { data: { x: '1' } });
      await cms.delete(ns, 'a2');
      await eventually(() => {
        expect(seen.added.sort()).toEqual(['a1', 'a2', 'a3']);
        expect(seen.updated).toContain('a1');
        expect(seen.deleted).toEqual(['a2']);
      });
      expect(inf.get(`${ns}/a1`)?.data).toEqual({ x: '1' });
      expect(inf.byIndex(byColor, 'red').map((o) => o.metadata?.name).sort()).toEqual(['a1', 'a3']);
      expect(inf.byIndex(byColor, 'blue')).toEqual([]);
      expect(inf.get(`${ns}/other`)).toBeUndefined();
      expect((inf.get(`${ns}/a1`)?.metadata as Record<string, unknown>)['managedFields']).toBeUndefined();
    } finally {
      stop();
    }
  });

  it('watches one object by field selector metadata.name', async () => {
    await cms.create(cm('solo'));
    await cms.create(cm('not-solo'));
    const { inf, stop } = informer({ field: 'metadata.name=solo' });
    try {
      await inf.synced;
      expect(inf.keys()).toEqual([`${ns}/solo`]);
    } finally {
      stop();
    }
  });

  it('resumes from its last resourceVersion when the watch is cut, without re-listing', async () => {
    const { inf, seen, stop } = informer({ label: 'suite=cut', viaProxy: true });
    try {
      await inf.synced;
      await proxy.waitForCount({ watch: true }, 1);
      expect(proxy.cutWatches()).toBeGreaterThan(0);
      await cms.create(cm('c1', { suite: 'cut' }));
      await eventually(() => expect(seen.added).toEqual(['c1']));
      expect(inf.stats.lists).toBe(1);
      expect(inf.stats.watches).toBeGreaterThanOrEqual(2);
    } finally {
      stop();
    }
  });

  it('re-lists after 410 Gone and reports the deletions it missed', async () => {
    await cms.create(cm('g1', { suite: 'gone' }));
    await cms.create(cm('g2', { suite: 'gone' }));
    const { inf, seen, stop } = informer({ label: 'suite=gone', viaProxy: true });
    try {
      await inf.synced;
      await proxy.waitForCount({ watch: true }, 1);
      // While the client is blind (watch cut, next watch told "expired"), g1 disappears and g3 appears.
      proxy.expireWatches(1);
      proxy.failNext({ status: 500, times: 1, match: { watch: true } });
      proxy.cutWatches();
      await cms.delete(ns, 'g1');
      await cms.create(cm('g3', { suite: 'gone' }));
      await eventually(() => {
        expect(inf.keys().sort()).toEqual([`${ns}/g2`, `${ns}/g3`]);
        expect(seen.deleted).toEqual(['g1']);
      });
      expect(inf.stats.lists).toBeGreaterThanOrEqual(2);
      expect(inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
      // The first list is a quorum read in pages; the re-list comes from the watch cache, unpaginated,
      // not older than the version the informer had seen (a cluster-wide informer re-listing from
      // etcd in pages under load was gone for minutes).
      const lists = proxy.requests().filter((r) => r.query['labelSelector'] === 'suite=gone' && r.method === 'GET' && !r.watch);
      expect(lists[0]?.query).toMatchObject({ limit: '500' });
      expect(lists[0]?.query['resourceVersion']).toBeUndefined();
      const relists = lists.slice(1);
      expect(relists.length).toBeGreaterThanOrEqual(1);
      for (const l of relists) {
        expect(l.query['limit']).toBeUndefined();
        expect(Number(l.query['resourceVersion'])).toBeGreaterThan(0);
      }
    } finally {
      stop();
    }
  });

  it('a re-list whose answer is cut short leaves the cache as it was and lists again; objects it finds unchanged keep their cached copies', async () => {
    await cms.create(cm('h1', { suite: 'halfway' }));
    await cms.create(cm('h2', { suite: 'halfway' }));
    const { inf, seen, stop } = informer({ label: 'suite=halfway', viaProxy: true });
    try {
      await inf.synced;
      await proxy.waitForCount({ watch: true }, 1);
      const h1 = inf.get(`${ns}/h1`);
      expect(h1).toBeDefined();
      // A whole first item, then the second cut off: what a connection dropped mid-list leaves.
      const cut = proxy.failNext({
        status: 200,
        times: 1,
        match: { method: 'GET', watch: false, path: /\/configmaps$/ },
        body: `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"h9","namespace":"${ns}"}},{"metadata":{"na`,
      });
      proxy.expireWatches(1);
      proxy.cutWatches();
      await cms.patch(ns, 'h2', { data: { n: '1' } });
      await eventually(() => {
        expect(cut.consumed).toBe(1);
        expect(inf.get(`${ns}/h2`)?.data).toEqual({ n: '1' });
      });
      expect(inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
      expect(inf.stats.failures).toBeGreaterThanOrEqual(1);
      // h9, from the answer cut short, never entered the cache, and nothing was reported deleted.
      expect(seen.added.sort()).toEqual(['h1', 'h2']);
      expect(seen.deleted).toEqual([]);
      expect(inf.keys().sort()).toEqual([`${ns}/h1`, `${ns}/h2`]);
      // The re-list found h1 at the version the cache held: the cached copy stays, no update reported.
      expect(inf.get(`${ns}/h1`)).toBe(h1);
      expect(seen.updated).toEqual(['h2']);
    } finally {
      stop();
    }
  });

  /** The informer's lists for a label, as [limit, first page or continued, status]. */
  const pagesAsked = (label: string): Array<[string | undefined, string, number | null]> =>
    proxy
      .requests()
      .filter((r) => r.query['labelSelector'] === label && r.method === 'GET' && !r.watch)
      .map((r) => [r.query['limit'], r.query['continue'] ? 'continue' : 'first', r.status]);

  it('a page that times out (504) is asked again half as big from the same continue token, keeping the pages read', async () => {
    for (let i = 0; i < 5; i++) await cms.create(cm(`p${i}`, { suite: 'pages' }));
    proxy.failNext({ status: 504, times: 2, match: { method: 'GET', watch: false, path: /\/configmaps$/, query: { labelSelector: /^suite=pages$/, continue: /./ } }, message: 'Timeout: request did not complete within 1m0s' });
    const { inf, seen, stop } = informer({ label: 'suite=pages', viaProxy: true, pageSize: 4 });
    try {
      await inf.synced;
      expect(inf.keys().sort()).toEqual([0, 1, 2, 3, 4].map((i) => `${ns}/p${i}`));
      expect(seen.added.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
      const asked = pagesAsked('suite=pages');
      expect(asked.slice(0, 4)).toEqual([
        ['4', 'first', 200],
        ['4', 'continue', 504],
        ['2', 'continue', 504],
        ['1', 'continue', 200],
      ]);
      // The server may end with a page that has only a token and no items.
      expect(asked.slice(4)).toEqual(asked.slice(4).map(() => ['1', 'continue', 200]));
      const tokens = proxy.requests().filter((r) => r.query['labelSelector'] === 'suite=pages' && !r.watch && r.query['continue']);
      expect(new Set(tokens.slice(0, 3).map((r) => r.query['continue'])).size).toBe(1);
      expect(inf.stats.failures).toBe(0);
    } finally {
      stop();
    }
  });

  it('a page that times out at one object gives the list up, to start over after the backoff', async () => {
    await cms.create(cm('q0', { suite: 'pages-out' }));
    await cms.create(cm('q1', { suite: 'pages-out' }));
    proxy.failNext({ status: 504, times: 2, match: { method: 'GET', watch: false, path: /\/configmaps$/, query: { labelSelector: /^suite=pages-out$/, continue: /./ } } });
    const { inf, stop } = informer({ label: 'suite=pages-out', viaProxy: true, pageSize: 1 });
    try {
      await inf.synced;
      expect(inf.keys().sort()).toEqual([`${ns}/q0`, `${ns}/q1`]);
      const asked = pagesAsked('suite=pages-out');
      expect(asked.slice(0, 6)).toEqual([
        ['1', 'first', 200],
        ['1', 'continue', 504],
        ['1', 'first', 200],
        ['1', 'continue', 504],
        ['1', 'first', 200],
        ['1', 'continue', 200],
      ]);
      expect(asked.slice(6)).toEqual(asked.slice(6).map(() => ['1', 'continue', 200]));
      expect(inf.stats.failures).toBe(2);
    } finally {
      stop();
    }
  });

  it('a re-list from the watch cache that times out (504) is read in pages from etcd next, and the one after comes from the cache again', async () => {
    await cms.create(cm('t1', { suite: 'timeout' }));
    const { inf, stop } = informer({ label: 'suite=timeout', viaProxy: true });
    const lists = (): Array<{ limit: string | undefined; resourceVersion: string; status: number | null }> =>
      proxy
        .requests()
        .filter((r) => r.query['labelSelector'] === 'suite=timeout' && r.method === 'GET' && !r.watch)
        .map((r) => ({ limit: r.query['limit'], resourceVersion: r.query['resourceVersion'] === undefined ? 'none' : 'set', status: r.status }));
    try {
      await inf.synced;
      await proxy.waitForCount({ watch: true }, 1);
      // What kube-apiserver answers a list it could not finish within its request timeout.
      proxy.failNext({ status: 504, times: 1, match: { method: 'GET', watch: false, path: /\/configmaps$/ }, message: 'Timeout: request did not complete within 1m0s' });
      proxy.expireWatches(1);
      proxy.cutWatches();
      await cms.create(cm('t2', { suite: 'timeout' }));
      await eventually(() => expect(inf.keys().sort()).toEqual([`${ns}/t1`, `${ns}/t2`]));
      expect(lists()).toEqual([
        { limit: '500', resourceVersion: 'none', status: 200 },
        { limit: undefined, resourceVersion: 'set', status: 504 },
        { limit: '500', resourceVersion: 'none', status: 200 },
      ]);
      await eventually(() => expect(proxy.requests().filter((r) => r.watch && r.query['labelSelector'] === 'suite=timeout' && r.status === 200).length).toBeGreaterThanOrEqual(2));
      proxy.expireWatches(1);
      proxy.cutWatches();
      // The proxy logs a request as it goes out and its status once answered.
      await eventually(() => expect(lists()).toHaveLength(4));
      await eventually(() => expect(lists()[3]).toEqual({ limit: undefined, resourceVersion: 'set', status: 200 }));
    } finally {
      stop();
    }
  });

  it("lists from the API server's watch cache when told to, also after a 410, and asks for long watches", async () => {
    await cms.create(cm('wc1', { suite: 'cache' }));
    const { inf, seen, stop } = informer({ label: 'suite=cache', viaProxy: true, fromCache: true });
    try {
      await inf.synced;
      await proxy.waitForCount({ watch: true }, 1);
      proxy.expireWatches(1);
      proxy.cutWatches();
      await cms.create(cm('wc2', { suite: 'cache' }));
      await eventually(() => expect(seen.added.sort()).toEqual(['wc1', 'wc2']));
      expect(inf.stats.relistsAfterGone).toBeGreaterThanOrEqual(1);
      const mine = proxy.requests().filter((r) => r.query['labelSelector'] === 'suite=cache');
      const lists = mine.filter((r) => r.method === 'GET' && !r.watch);
      expect(lists.length).toBeGreaterThanOrEqual(2);
      // resourceVersion=0 at start-up, then the last version seen: answered from the watch cache,
      // not a quorum read of every ConfigMap in etcd.
      expect(lists[0]?.query).toMatchObject({ resourceVersion: '0' });
      for (const l of lists.slice(1)) expect(Number(l.query['resourceVersion'])).toBeGreaterThan(0);
      for (const l of lists) expect(l.query['limit']).toBeUndefined();
      for (const w of mine.filter((r) => r.watch)) {
        expect(Number(w.query['timeoutSeconds'])).toBeGreaterThanOrEqual(600);
        expect(Number(w.query['timeoutSeconds'])).toBeLessThan(1200);
      }
    } finally {
      stop();
    }
  });

  /** The watch requests, oldest first, of the informer a test started with label suite=`suite`. */
  const watchesOf =
    (suite: string) =>
    (): ReturnType<typeof proxy.requests> =>
      proxy.requests().filter((r) => r.watch && r.query['labelSelector'] === `suite=${suite}`);

  /**
   * Ends the informer's watch five times, each a little over a second after the server answered it;
   * with `touch`, its object changes on each watch first, so the informer's resourceVersion is new.
   */
  async function endWatchesRepeatedly(suite: string, opts: { sheddingBackoffMaxMs?: number; resumeWithinMs?: number; touch?: boolean } = {}): Promise<{ gaps: number[]; earlyEnds: number }> {
    await cms.create(cm(`${suite}1`, { suite }));
    const { inf, stop } = informer({ label: `suite=${suite}`, viaProxy: true, backoffMinMs: 1_000, ...opts });
    let touches = 0;
    const touch = async (): Promise<void> => {
      if (opts.touch !== true) return;
      const data = { n: String(++touches) };
      await cms.patch(ns, `${suite}1`, { data });
      await eventually(() => expect(inf.get(`${ns}/${suite}1`)?.data).toEqual(data), 10_000, 20);
    };
    const watches = watchesOf(suite);
    try {
      await inf.synced;
      await eventually(() => expect(watches()[0]?.status).toBe(200));
      // A watch that ran a while and was ended early: resumed at once.
      await touch();
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.endWatches();
      await eventually(() => expect(watches().length).toBe(2));
      const answered = async (n: number): Promise<void> => {
        await eventually(() => expect(watches()[n - 1]?.status).toBe(200), 15_000, 20);
        await touch();
        await new Promise((r) => setTimeout(r, 1_200));
      };
      for (let n = 3; n <= 5; n++) {
        await answered(n - 1);
        proxy.endWatches();
        await eventually(() => expect(watches().length).toBe(n), 15_000, 20);
      }
      await answered(5);
      proxy.endWatches();
      const w = watches();
      return { gaps: w.slice(1).map((x, i) => x.at - (w[i]?.endedAt ?? x.at)), earlyEnds: inf.stats.earlyWatchEnds };
    } finally {
      stop();
    }
  }

  it('comes back at once after one early end of its watch, later and later while the server keeps ending them', async () => {
    const { gaps, earlyEnds } = await endWatchesRepeatedly('early');
    expect(gaps[0]).toBeLessThan(400);
    // 1 s doubling, each drawn from half to one and a half of it: 0.5+, 1+, 2+ s.
    gaps.slice(1).forEach((g, i) => expect(g).toBeGreaterThanOrEqual(500 * 2 ** i - 20));
    expect(earlyEnds).toBeGreaterThanOrEqual(4);
  });

  it('comes back within its own cap when the server keeps ending its watch (a controller\'s single watch)', async () => {
    const { gaps } = await endWatchesRepeatedly('shedcap', { sheddingBackoffMaxMs: 1_000 });
    expect(gaps[0]).toBeLessThan(400);
    // Uncapped, the fourth resume waits 2+ s; at a 1 s cap each waits at most 1.5 s.
    expect(gaps.length).toBe(4);
    gaps.slice(1).forEach((g) => expect(g).toBeLessThan(1_500 + 300));
  });

  it('comes back before its last resourceVersion is resumeWithinMs old, however long its backoff has grown', async () => {
    // Each watch brings a new version (the object changes), then runs 1.2 s: 2 s minus 1.2 s leaves
    // 0.8 s, so each resume comes within 0.4 to 0.8 s where the backoff alone waits 0.5+, 1+, 2+ s.
    const { gaps } = await endWatchesRepeatedly('fresh', { sheddingBackoffMaxMs: 60_000, resumeWithinMs: 2_000, touch: true });
    expect(gaps.length).toBe(4);
    gaps.slice(1).forEach((g) => expect(g).toBeLessThan(800 + 300));
  });

  /**
   * An informer on one labelled object whose first watch ran a while, during which another object
   * changed (the server's version moved on, the informer's filtered one did not), then was ended
   * early: the state a daemon's watch is in when the server sheds it.
   */
  async function endedEarlyWithOlderVersion(suite: string, opts: { fromCache?: boolean }): Promise<ReturnType<typeof informer> & { watches: ReturnType<typeof watchesOf>; listed: number }> {
    await cms.create(cm(`${suite}1`, { suite }));
    const started = informer({ label: `suite=${suite}`, viaProxy: true, refreshVersionAfterMs: 500, ...opts });
    const watches = watchesOf(suite);
    try {
      await started.inf.synced;
      await eventually(() => expect(watches()[0]?.status).toBe(200));
      const listed = Number(watches()[0]?.query['resourceVersion']);
      await cms.create(cm(`${suite}-other`));
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.endWatches();
      await eventually(() => expect(watches().length).toBe(2));
      return { ...started, watches, listed };
    } catch (err) {
      started.stop();
      throw err;
    }
  }

  it('after an early end, renews an ageing resourceVersion with a short watch\'s bookmark while its own object stays unchanged', async () => {
    const { inf, seen, stop, watches, listed } = await endedEarlyWithOlderVersion('refresh', {});
    try {
      expect(watches()[1]?.query['timeoutSeconds']).toBe(String(REFRESH_WATCH_SECONDS));
      expect(Number(watches()[1]?.query['resourceVersion'])).toBe(listed);
      // Another object changes while the short watch runs (as thousands of NodeImages do while a
      // daemon's watch is shed): the server's bookmark, 2 s before that watch's deadline, carries the
      // newer version into the next watch, an ordinary long one.
      await eventually(() => expect(watches()[1]?.status).toBe(200));
      await cms.patch(ns, 'refresh-other', { data: { n: '1' } });
      await eventually(() => expect(watches().length).toBe(3), 15_000);
      expect(Number(watches()[2]?.query['resourceVersion'])).toBeGreaterThan(listed);
      expect(Number(watches()[2]?.query['timeoutSeconds'])).toBeGreaterThanOrEqual(300);
      expect(inf.stats.refreshWatches).toBe(1);
      expect(inf.stats.lists).toBe(1);
      expect(seen.updated).toEqual([]);
    } finally {
      stop();
    }
  });

  it('where lists come from the watch cache, renews an ageing version after an early end with a list not older than it, then watches from that list', async () => {
    const { inf, seen, stop, watches, listed } = await endedEarlyWithOlderVersion('refreshlist', { fromCache: true });
    const mine = (): ReturnType<typeof proxy.requests> => proxy.requests().filter((r) => r.query['labelSelector'] === 'suite=refreshlist');
    try {
      const lists = mine().filter((r) => r.method === 'GET' && !r.watch);
      expect(lists.length).toBe(2);
      // Not older than what the informer has seen, so a watch cache behind it cannot take it back.
      expect(lists[1]?.query['resourceVersion']).toBe(String(listed));
      // Resumed from the list's newer version, so the server replays nothing it has kept since.
      expect(Number(watches()[1]?.query['resourceVersion'])).toBeGreaterThan(listed);
      expect(Number(watches()[1]?.query['timeoutSeconds'])).toBeGreaterThanOrEqual(600);
      expect(inf.stats.refreshLists).toBe(1);
      expect(inf.stats.refreshWatches).toBe(0);
      expect(seen.updated).toEqual([]);
      expect(seen.deleted).toEqual([]);
      // And it still follows its own objects.
      await cms.patch(ns, 'refreshlist1', { data: { n: '1' } });
      await eventually(() => expect(seen.updated).toEqual(['refreshlist1']));
    } finally {
      stop();
    }
  });

  it('keeps backing off when a short watch runs its course and the long one after it is ended early again', async () => {
    await cms.create(cm('shedref1', { suite: 'shedref' }));
    const { inf, stop } = informer({ label: 'suite=shedref', viaProxy: true, backoffMinMs: 1_000, refreshVersionAfterMs: 500 });
    const watches = watchesOf('shedref');
    try {
      await inf.synced;
      await eventually(() => expect(watches()[0]?.status).toBe(200));
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.endWatches();
      // The short watch runs out by itself; the long one after it is ended early like the first.
      await eventually(() => expect(watches().length).toBe(3), 15_000, 20);
      expect(watches()[1]?.query['timeoutSeconds']).toBe(String(REFRESH_WATCH_SECONDS));
      await eventually(() => expect(watches()[2]?.status).toBe(200), 15_000, 20);
      await new Promise((r) => setTimeout(r, 1_200));
      proxy.endWatches();
      await eventually(() => expect(watches().length).toBe(4), 15_000, 20);
      const w = watches();
      // A second early end in a row: 1 s of backoff drawn from half to one and a half of it, where
      // a short watch's end taken for a lasting one would have it come back at once.
      expect((w[3]?.at ?? 0) - (w[2]?.endedAt ?? 0)).toBeGreaterThanOrEqual(500 - 20);
    } finally {
      stop();
    }
  });

  it('retries a list answered with 429 and 500 until it syncs', async () => {
    await cms.create(cm('r1', { suite: 'retry' }));
    proxy.failNext({ status: 500, times: 2, match: { method: 'GET', watch: false, path: /configmaps$/ } });
    proxy.failNext({ status: 429, times: 1, retryAfterSeconds: 1, match: { method: 'GET', watch: false, path: /configmaps$/ } });
    const { inf, stop } = informer({ label: 'suite=retry', viaProxy: true });
    try {
      await eventually(() => expect(inf.hasSynced()).toBe(true));
      expect(inf.keys()).toEqual([`${ns}/r1`]);
      expect(proxy.count({ method: 'GET', watch: false, status: 500 })).toBe(2);
      expect(proxy.count({ method: 'GET', watch: false, status: 429 })).toBe(1);
    } finally {
      stop();
    }
  });

  it('survives an API server outage and catches up afterwards', async () => {
    const { inf, seen, stop } = informer({ label: 'suite=outage', viaProxy: true });
    try {
      await inf.synced;
      proxy.refuseConnections();
      await cms.create(cm('o1', { suite: 'outage' }));
      await new Promise((r) => setTimeout(r, 2500));
      expect(seen.added).toEqual([]);
      proxy.acceptConnections();
      await eventually(() => expect(seen.added).toEqual(['o1']), 30_000);
      expect(inf.stats.failures).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
