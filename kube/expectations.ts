import type { KubeObject } from '../api/types/common.js';
import { resourceVersionAtLeast } from './resource-version.js';

interface Expected<M> {
  resourceVersion: string;
  at: number;
  meta: M;
}

/**
 * What a controller wrote and its cache has not shown yet (client-go's resource-version
 * expectations): after a write, `expect(owner, object, rv)`; until the cache holds that version or
 * a later one, the write is "pending" and the controller must neither count on the cache for that
 * object nor write it again. Entries give up after `timeoutMs` (a lost watch event must not block
 * forever): client-go's 5 minutes (ExpectationsTimeout in k8s.io/kubernetes/pkg/controller/
 * controller_utils.go). A cache can trail its own writes by more than 30 s: at 5,000 nodes the
 * API server hands each NodeImage event to every daemon's watch, and the manager's watch waits its
 * turn. With 30 s the manager wrote again, from its stale cache, NodeImages it had written, each a
 * 409 Conflict and a fresh read, again every few seconds.
 */
export class ResourceVersionExpectations<M = undefined> {
  private readonly byOwner = new Map<string, Map<string, Expected<M>>>();

  constructor(
    private readonly timeoutMs = 5 * 60_000,
    private readonly now: () => number = () => Date.now(),
  ) {}

  expect(owner: string, object: string, resourceVersion: string | undefined, meta: M): void {
    if (resourceVersion === undefined || resourceVersion === '') return;
    let m = this.byOwner.get(owner);
    if (!m) this.byOwner.set(owner, (m = new Map()));
    m.set(object, { resourceVersion, at: this.now(), meta });
  }

  /** The pending write, or undefined once the cache shows it (the entry is then dropped). */
  pending(owner: string, object: string, cachedResourceVersion: string | undefined): { meta: M } | undefined {
    const m = this.byOwner.get(owner);
    const e = m?.get(object);
    if (!m || !e) return undefined;
    if (resourceVersionAtLeast(cachedResourceVersion, e.resourceVersion) || this.now() - e.at > this.timeoutMs) {
      m.delete(object);
      if (m.size === 0) this.byOwner.delete(owner);
      return undefined;
    }
    return { meta: e.meta };
  }

  forget(owner: string): void {
    this.byOwner.delete(owner);
  }
}

/**
 * The version a read-modify-write (kube/write.ts updateWithRetry) leaves to expect of an object the
 * cache holds at `cachedResourceVersion`: what the server returned, when newer than the cache. That
 * is the version written, or, after a conflict, the copy read fresh that needed no write: the
 * object is already as wanted there, and a cache still behind it must not make the controller
 * write it again.
 */
export function versionToExpect(result: KubeObject | undefined, cachedResourceVersion: string | undefined): string | undefined {
  const rv = result?.metadata?.resourceVersion;
  return rv && !resourceVersionAtLeast(cachedResourceVersion, rv) ? rv : undefined;
}
