import type { Logger } from './log.js';
import { componentLogger, errorFields } from './log.js';
import { ApiError, type StatusBody, type WatchEvent } from './rest.js';
import type { KubeObject } from '../api/types/common.js';
import { objectKey, type Resource } from './resource.js';

export interface EventHandlers<T> {
  add?: (obj: T) => void;
  update?: (oldObj: T, newObj: T) => void;
  delete?: (obj: T) => void;
}

/**
 * A secondary index of a cache, as client-go's Indexers: `keys` lists the values an object is filed
 * under. Controllers sharing an informer share the index by sharing this object.
 */
export interface Index<T> {
  readonly name: string;
  readonly keys: (obj: T) => string[];
}

export interface InformerOptions {
  /** Limit to one namespace (namespaced kinds); all namespaces when absent. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Keep metadata.managedFields (dropped by default: large, and rarely read). */
  keepManagedFields?: boolean;
  /**
   * Applied to each object as it enters the cache (client-go's SetTransform), e.g. the manager's
   * Interner; the object is not shared with anything else yet and may be changed in place.
   */
  transform?: <O extends KubeObject>(obj: O) => O;
  logger?: Logger | undefined;
  /** Backoff between failed list/watch attempts, doubling from min to max. */
  backoffMinMs?: number;
  backoffMaxMs?: number;
  /**
   * The longest wait before coming back to a server that keeps ending the watch early (30 s): a
   * daemon is one of thousands that must come back spread out (with 10 s, 5,000 simulated daemons
   * had 1.7 times the closes and the manager's writes took 1.5-1.8 times as long: BENCHMARKS.md); a
   * controller's cluster-wide watch is one client, and every second it stays away its cache falls
   * behind (and out of the server's event window, into a full re-list).
   */
  sheddingBackoffMaxMs?: number;
  /**
   * However long that wait has grown, the watch comes back before the last resourceVersion it saw is
   * this old (45 s): kube-apiserver keeps at least 75 s of a resource's events in its watch cache
   * (eventFreshDuration in k8s.io/apiserver/pkg/storage/cacher/watch_cache.go), and a watch resumed
   * from a version it no longer holds gets a 410 and a re-list. A filtered watch (a daemon's own
   * NodeImage) learns newer versions only from its objects' events and the bookmarks the server
   * sends about once a minute, so its version ages while others' objects churn.
   */
  resumeWithinMs?: number;
  /**
   * After an early end, a version at least this old (30 s) is refreshed before it ages out: the next
   * watch asks for a short timeout (`REFRESH_WATCH_SECONDS`), and the server sends a bookmark with
   * its current resourceVersion 2 s before a watch's deadline (nextBookmarkTime in
   * k8s.io/apiserver/pkg/storage/cacher/cacher.go), where a long watch's first bookmark comes only
   * after a minute. A daemon's watch, filtered to its own NodeImage, hears of no other object; while
   * the server keeps closing it within seconds (every NodeImage event goes to every watcher of a
   * custom resource, which has no trigger index), that bookmark is the only news of a newer version
   * it can get without a list. Where a list is one lookup (`listFromWatchCache`), a list renews the
   * version instead (below).
   */
  refreshVersionAfterMs?: number;
  /**
   * The server ends each watch after a time drawn from [this, twice this) seconds (client-go's
   * reflector: 300). Every end is a new watch request, which thousands of daemons multiply.
   */
  minWatchTimeoutSeconds?: number;
  /**
   * List at start-up with resourceVersion=0, which the API server answers from its watch cache.
   * Without it the first list is a quorum read from etcd in pages, and for a selector on a custom
   * resource (no index) that reads every object of the kind to filter them: thousands of daemons
   * starting read every NodeImage each. Only for selectors that leave a few objects: the cache
   * ignores the page size. Later lists come from the watch cache either way (`relist`).
   */
  listFromWatchCache?: boolean;
  /** Objects per page of a list read from etcd (client-go's pager: 500). */
  listPageSize?: number;
}

const LIST_PAGE_SIZE = 500;
/**
 * A refreshing watch's timeout: its bookmark is due 2 s before the deadline, at 1 s, and goes out on
 * the cacher's next bookmark tick (every 0.75–1.25 s), so by 2.25 s, carrying the newest version if
 * any event (of any object) reached the cache meanwhile. As short as allows that: a server closing
 * watches within seconds must not close this one first, and a 4 s one waits a second longer for the
 * same bookmark.
 */
export const REFRESH_WATCH_SECONDS = 3;

/**
 * The timeout the next watch asks for: after an early end, with a version `refreshVersionAfterMs`
 * old or older, a short one whose bookmark renews the version, though never two in a row (with
 * nothing changing anywhere there is no bookmark to get, and the version is as new as it gets);
 * otherwise one drawn from [min, 2 min) seconds, so clients do not all come back at once.
 */
export function watchTimeoutSeconds(
  last: { earlyEnds: number; versionAgeMs: number; refreshed: boolean },
  refreshVersionAfterMs: number,
  minWatchTimeoutSeconds: number,
  random: () => number = Math.random,
): { seconds: number; refresh: boolean } {
  if (last.earlyEnds > 0 && !last.refreshed && last.versionAgeMs >= refreshVersionAfterMs) return { seconds: REFRESH_WATCH_SECONDS, refresh: true };
  return { seconds: minWatchTimeoutSeconds + Math.floor(random() * minWatchTimeoutSeconds), refresh: false };
}

/**
 * Whether to renew the version with a list from the watch cache before resuming after an early end:
 * when the informer's selector leaves a few objects (`listFromWatchCache`; a controller's list of
 * a whole kind is no cheap renewal) and the version is `refreshVersionAfterMs` old or older. A
 * watch resumed from an old version first replays every event of the kind the server kept since
 * then, and takes no new event meanwhile (cacheWatcher.process in
 * k8s.io/apiserver/pkg/storage/cacher/cacher.go): on a server already shedding watchers, that replay
 * is what gets it closed again, after each new event's dispatch to every watcher has waited for it
 * (Cacher.dispatchEvent). A list from the cache answers with the cache's newest version, so the watch after it
 * replays nothing; for one named object (a daemon's NodeImage) it is a single lookup
 * (Cacher.GetToList).
 */
export function refreshByList(last: { earlyEnds: number; versionAgeMs: number }, refreshVersionAfterMs: number, listFromWatchCache: boolean): boolean {
  return listFromWatchCache && last.earlyEnds > 0 && last.versionAgeMs >= refreshVersionAfterMs;
}

/**
 * How long to stay away from a server that keeps ending the watch: the spread-out backoff (half to
 * one and a half of `backoffMs`), but at most until the last resourceVersion, `versionAgeMs` old
 * now, is `resumeWithinMs` old, itself spread over the second half of what is left, so watchers
 * holding versions of one age do not come back in one instant. A version already that old is
 * likely gone anyway: the backoff alone decides.
 */
export function resumeWaitMs(backoffMs: number, versionAgeMs: number, resumeWithinMs: number, random: () => number = Math.random): number {
  const wait = backoffMs * (0.5 + random());
  const left = resumeWithinMs - versionAgeMs;
  return left > 0 ? Math.min(wait, left * (0.5 + random() / 2)) : wait;
}

/** managedFields are often the larger part of an object and nothing here reads them. */
function dropManagedFields<T extends KubeObject>(obj: T): T {
  const md = obj.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (md && 'managedFields' in md) delete md.managedFields;
  return obj;
}

/**
 * A list+watch cache of one resource type, like client-go's reflector and indexer: it lists, then
 * watches from the list's resourceVersion; a cut watch resumes from the last version seen; an
 * expired version (410) re-lists and reconciles the cache, reporting deletions it missed; failures
 * back off exponentially. Handlers run synchronously and should only enqueue.
 */
export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private readonly handlers: EventHandlers<T>[] = [];
  private readonly log: Logger;
  private readonly indexes = new Map<string, Index<T>>();
  private resourceVersion = '';
  /** When the informer last learned a resourceVersion (list, event, bookmark). */
  private resourceVersionAt = 0;
  private syncedFlag = false;
  /** The last re-list from the watch cache timed out: the next one reads pages from etcd. */
  private cacheListTimedOut = false;
  private resolveSynced: () => void = () => undefined;
  readonly synced: Promise<void>;
  /**
   * How often the informer listed and (re)started a watch, for tests; metrics see the same requests
   * in the API request counter (verb list/watch, code 410 for an expired version).
   */
  readonly stats = { lists: 0, watches: 0, relistsAfterGone: 0, failures: 0, earlyWatchEnds: 0, refreshWatches: 0, refreshLists: 0 };

  constructor(
    private readonly resource: Resource<T>,
    private readonly opts: InformerOptions = {},
  ) {
    this.log = opts.logger ?? componentLogger(`informer/${resource.type.plural}`);
    this.synced = new Promise((r) => {
      this.resolveSynced = r;
    });
  }

  private prepare(obj: T): T {
    const kept = this.trimmed(obj);
    return this.opts.transform ? this.opts.transform(kept) : kept;
  }

  private trimmed(obj: T): T {
    return this.opts.keepManagedFields ? obj : dropManagedFields(obj);
  }

  /** Adds an index (also over what is cached already); shared informers collect them from their users. */
  addIndex(index: Index<T>): this {
    const known = this.indexes.get(index.name);
    if (known === index) return this;
    if (known !== undefined) throw new Error(`informer/${this.resource.type.plural}: two different indexes named ${index.name}`);
    this.indexes.set(index.name, index);
    this.indices.set(index.name, new Map());
    for (const [key, obj] of this.store) this.indexInto(index, key, obj);
    return this;
  }

  on(h: EventHandlers<T>): this {
    this.handlers.push(h);
    return this;
  }

  hasSynced(): boolean {
    return this.syncedFlag;
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  keys(): string[] {
    return [...this.store.keys()];
  }

  byIndex(index: Index<T>, value: string): T[] {
    const keys = this.indices.get(index.name)?.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.store.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  /** Runs until the signal aborts. */
  run(signal: AbortSignal): Promise<void> {
    return this.loop(signal);
  }

  private async loop(signal: AbortSignal): Promise<void> {
    const min = this.opts.backoffMinMs ?? 800;
    const max = this.opts.backoffMaxMs ?? 30_000;
    const shedMax = this.opts.sheddingBackoffMaxMs ?? 30_000;
    let backoff = min;
    let shedBackoff = min;
    let needList = true;
    let earlyEnds = 0;
    let refreshed = false;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.relist(signal, this.resourceVersion);
          needList = false;
        }
        if (refreshByList({ earlyEnds, versionAgeMs: Date.now() - this.resourceVersionAt }, this.opts.refreshVersionAfterMs ?? 30_000, this.opts.listFromWatchCache === true)) {
          this.stats.refreshLists++;
          await this.relist(signal, this.resourceVersion);
        }
        const started = Date.now();
        const next = watchTimeoutSeconds(
          { earlyEnds, versionAgeMs: started - this.resourceVersionAt, refreshed },
          this.opts.refreshVersionAfterMs ?? 30_000,
          this.opts.minWatchTimeoutSeconds ?? 300,
        );
        const timeoutSeconds = next.seconds;
        refreshed = next.refresh;
        if (refreshed) this.stats.refreshWatches++;
        const expired = await this.watchOnce(timeoutSeconds, signal);
        if (expired) {
          this.stats.relistsAfterGone++;
          needList = true;
          this.log.info('watch expired, re-listing', { resourceVersion: this.resourceVersion });
        }
        const lasted = Date.now() - started;
        const timeoutMs = timeoutSeconds * 1000;
        const endedEarly = !expired && lasted < timeoutMs - Math.min(5_000, timeoutMs / 2);
        // A short watch that ran its course says nothing of whether the server still sheds watchers
        // (measured at 5,000 simulated nodes: resetting here had the daemons come straight back each
        // time, with 8 times the closes, and 5 jobs not done in 28 minutes); only a long watch that
        // lasts does.
        if ((!endedEarly && !refreshed) || lasted >= 60_000) {
          backoff = min;
          shedBackoff = min;
          earlyEnds = 0;
        }
        if (endedEarly) {
          // The server ended the watch before its timeout. Once is a cut connection: resume at once.
          // Again and again is a server shedding watchers (kube-apiserver closes the ones that lag
          // behind its watch cache, "Forcing watcher close due to unresponsiveness"): every client
          // coming straight back, replaying what it missed, is what keeps it overloaded, so they
          // come back spread out, later each time.
          earlyEnds++;
          this.stats.earlyWatchEnds++;
          if (earlyEnds > 1 || lasted < 1_000) {
            await sleep(resumeWaitMs(shedBackoff, Date.now() - this.resourceVersionAt, this.opts.resumeWithinMs ?? 45_000), signal);
            shedBackoff = Math.min(shedMax, shedBackoff * 2);
          }
        }
      } catch (err) {
        if (signal.aborted) break;
        this.stats.failures++;
        if (err instanceof ApiError && err.gone) {
          needList = true;
          this.stats.relistsAfterGone++;
          continue;
        }
        this.log.warn(needList ? 'list failed, retrying' : 'watch failed, resuming', { ...errorFields(err), retryInMs: backoff });
        // An outage's end cuts the backoff short: the cache catches up as soon as the server is back.
        const woken = await this.resource.rest.backoff(backoff + Math.random() * backoff * 0.2, signal);
        backoff = woken ? min : Math.min(max, backoff * 2);
      }
    }
  }

  private baseQuery(): Record<string, string | undefined> {
    return { labelSelector: this.opts.labelSelector, fieldSelector: this.opts.fieldSelector };
  }

  /**
   * `notOlderThan`: the last version seen ('' before the first list), which the list must not go
   * back before (a watch cache behind it waits). Once there is one, the list comes from the watch
   * cache, unpaginated, as client-go's reflector does on a re-list (it drops the page size so that
   * a version is served from the cache: ListAndWatch in k8s.io/client-go/tools/cache/reflector.go).
   * A quorum read in pages from etcd, for a controller's cluster-wide informer after a 410, read
   * every NodeImage while the API server was busiest: at 5,000 nodes the manager's watch was gone
   * for 274 s.
   */
  private async relist(signal: AbortSignal, notOlderThan: string): Promise<void> {
    this.stats.lists++;
    const fromCache = (notOlderThan !== '' && !this.cacheListTimedOut) || this.opts.listFromWatchCache === true;
    try {
      await this.listInto(signal, fromCache, notOlderThan);
    } catch (err) {
      // The API server answers a list within its request timeout (60 s) or not at all, and one
      // unpaginated answer grows with the cluster: at 50 jobs over 5,000 nodes, the manager's re-list
      // of every NodeImage from the watch cache got 504 seven times in a row, its cache 9 minutes
      // behind when the run was stopped. Pages from etcd each fit the timeout. A daemon's list of its own
      // NodeImage is small, and read in pages it would have the server read every NodeImage.
      if (fromCache && this.opts.listFromWatchCache !== true && err instanceof ApiError && err.status === 504) this.cacheListTimedOut = true;
      throw err;
    }
    this.cacheListTimedOut = false;
  }

  private async listInto(signal: AbortSignal, fromCache: boolean, notOlderThan: string): Promise<void> {
    // Items are readied as they stream in and applied once the list is whole, so a list cut short
    // leaves the cache as it was. An item whose version the cache holds keeps the cached object:
    // while the list runs, memory grows with what changed, not with the whole list (at 50 jobs over
    // 5,000 nodes, the manager's heap ran out in a re-list read whole: BENCHMARKS.md).
    const fresh = new Map<string, T>();
    const onItem = (raw: T): void => {
      const key = objectKey(raw);
      const cached = this.store.get(key);
      fresh.set(key, cached !== undefined && cached.metadata?.resourceVersion === raw.metadata?.resourceVersion ? cached : this.prepare(raw));
    };
    const meta = fromCache
      ? await this.resource.listEach(this.opts.namespace, { ...this.baseQuery(), resourceVersion: notOlderThan || '0' }, onItem, signal)
      : await this.resource.listEachPaged(this.opts.namespace, this.baseQuery(), this.opts.listPageSize ?? LIST_PAGE_SIZE, onItem, {
          signal,
          onPageTimeout: (err, limit, firstPage) => this.log.warn('list page timed out, asking again for fewer', { ...errorFields(err), limit, firstPage }),
        });
    const rv = meta.resourceVersion ?? '';
    this.replace(fresh);
    this.resourceVersion = rv;
    this.resourceVersionAt = Date.now();
    if (!this.syncedFlag) {
      this.syncedFlag = true;
      this.resolveSynced();
    }
  }

  /** Whether the server said the resourceVersion expired (410). */
  private async watchOnce(timeoutSeconds: number, signal: AbortSignal): Promise<boolean> {
    // Stopped while it listed (a handler, or whoever awaited `synced`, may stop it before the list
    // returns): an aborted signal never fires its listeners again, and the watch would run its whole
    // timeout, holding the process open (the CLI's watch command waited out 378 s).
    if (signal.aborted) return false;
    this.stats.watches++;
    let expired = false;
    const ac = new AbortController();
    const onAbort = (): void => ac.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await this.resource.watch(
        this.opts.namespace,
        {
          ...this.baseQuery(),
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          // Servers end watches on this timeout; a spread avoids every client reconnecting at once.
          timeoutSeconds,
        },
        (ev: WatchEvent<T>) => {
          if (ev.type === 'ERROR') {
            const st = ev.object as unknown as StatusBody;
            if (st.code === 410) expired = true;
            else this.log.warn('watch error event', { code: st.code, reason: st.reason, message: st.message });
            ac.abort();
            return;
          }
          this.apply(ev);
        },
        ac.signal,
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    return expired;
  }

  private apply(ev: WatchEvent<T>): void {
    const obj = ev.object;
    const rv = obj.metadata?.resourceVersion;
    if (rv) {
      this.resourceVersion = rv;
      this.resourceVersionAt = Date.now();
    }
    if (ev.type === 'BOOKMARK') return;
    const key = objectKey(obj);
    if (ev.type === 'DELETED') {
      const old = this.store.get(key);
      this.remove(key);
      // A deletion never enters the cache: nothing to share it with.
      this.emitDelete(old ?? this.trimmed(obj));
      return;
    }
    const cur = this.prepare(obj);
    const old = this.store.get(key);
    this.put(key, cur);
    if (old) this.emitUpdate(old, cur);
    else this.emitAdd(cur);
  }

  /** Reconciles the cache with a fresh list, reporting what changed while we were not watching. */
  private replace(fresh: Map<string, T>): void {
    for (const [key, obj] of fresh) {
      const old = this.store.get(key);
      if (old === obj) continue;
      this.put(key, obj);
      if (old) this.emitUpdate(old, obj);
      else this.emitAdd(obj);
    }
    for (const [key, old] of [...this.store]) {
      if (!fresh.has(key)) {
        this.remove(key);
        this.emitDelete(old);
      }
    }
  }

  private put(key: string, obj: T): void {
    this.unindex(key);
    this.store.set(key, obj);
    for (const index of this.indexes.values()) this.indexInto(index, key, obj);
  }

  private indexInto(index: Index<T>, key: string, obj: T): void {
    const idx = this.indices.get(index.name);
    if (!idx) return;
    for (const v of index.keys(obj)) {
      let s = idx.get(v);
      if (!s) idx.set(v, (s = new Set()));
      s.add(key);
    }
  }

  private remove(key: string): void {
    this.unindex(key);
    this.store.delete(key);
  }

  private unindex(key: string): void {
    const old = this.store.get(key);
    if (!old) return;
    for (const index of this.indexes.values()) {
      const idx = this.indices.get(index.name);
      if (!idx) continue;
      for (const v of index.keys(old)) {
        const s = idx.get(v);
        s?.delete(key);
        if (s && s.size === 0) idx.delete(v);
      }
    }
  }

  private emitAdd(obj: T): void {
    for (const h of this.handlers) this.safe(() => h.add?.(obj));
  }
  private emitUpdate(old: T, cur: T): void {
    for (const h of this.handlers) this.safe(() => h.update?.(old, cur));
  }
  private emitDelete(obj: T): void {
    for (const h of this.handlers) this.safe(() => h.delete?.(obj));
  }
  private safe(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error('event handler failed', errorFields(err));
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
