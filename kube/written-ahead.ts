import type { KubeObject } from '../api/types/common.js';
import type { EventHandlers } from './informer.js';
import { newerResourceVersion } from './resource-version.js';

/**
 * This process's last written copy of each object, held until its informer shows that version or
 * a newer one. A write built on the cache's copy from before it would be refused (409, or a failed
 * patch test) and cost a read and a second write: under load the manager's NodeImage watch trails
 * by seconds, while the next job's change to the same NodeImage is already going out (5 jobs over
 * 5,000 nodes: 4,071 of 17,461 NodeImage spec writes were refused so, BENCHMARKS.md).
 */
export class WrittenAhead<T extends KubeObject> {
  private readonly copies = new Map<string, T>();

  constructor(
    private readonly informer: { on(h: EventHandlers<T>): unknown; get(key: string): T | undefined },
    private readonly keyOf: (obj: T) => string,
  ) {
    const seen = (obj: T): void => {
      const key = keyOf(obj);
      const copy = this.copies.get(key);
      if (copy && !newerResourceVersion(copy.metadata?.resourceVersion, obj.metadata?.resourceVersion)) this.copies.delete(key);
    };
    informer.on({ add: seen, update: (_old, obj) => seen(obj), delete: (obj) => this.copies.delete(keyOf(obj)) });
  }

  /** Keeps what the server answered to a write, unless the cache already holds it (or the object was gone). */
  written(obj: T | undefined): void {
    if (!obj) return;
    const key = this.keyOf(obj);
    if (newerResourceVersion(obj.metadata?.resourceVersion, this.informer.get(key)?.metadata?.resourceVersion)) this.copies.set(key, obj);
  }

  /** The newer of the cache's copy and this process's last write of the object. */
  newest(key: string): T | undefined {
    const cached = this.informer.get(key);
    const copy = this.copies.get(key);
    return copy && newerResourceVersion(copy.metadata?.resourceVersion, cached?.metadata?.resourceVersion) ? copy : cached;
  }

  get size(): number {
    return this.copies.size;
  }
}
