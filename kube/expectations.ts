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
 * forever).
 */
export class ResourceVersionExpectations<M = undefined> {
  private readonly byOwner = new Map<string, Map<string, Expected<M>>>();

  constructor(
    private readonly timeoutMs = 30_000,
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
