import type { KubeObject } from '../../api/types/common.js';
import type { EventHandlers } from '../../kube/informer.js';
import { WrittenAhead } from '../../kube/written-ahead.js';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, resourceVersion: rv } });

/** A cache whose events the test sends, as an informer's watch would. */
function cache(...objs: KubeObject[]) {
  const store = new Map(objs.map((o) => [o.metadata?.name ?? '', o]));
  const handlers: Array<EventHandlers<KubeObject>> = [];
  return {
    on: (h: EventHandlers<KubeObject>) => handlers.push(h),
    get: (key: string) => store.get(key),
    update(o: KubeObject) {
      const old = store.get(o.metadata?.name ?? '') ?? o;
      store.set(o.metadata?.name ?? '', o);
      for (const h of handlers) h.update?.(old, o);
    },
    delete(name: string) {
      const old = store.get(name);
      store.delete(name);
      if (old) for (const h of handlers) h.delete?.(old);
    },
  };
}

describe('WrittenAhead', () => {
  it('serves its own write until the cache shows it, then the cache again', () => {
    const c = cache(obj('a', '10'));
    const ahead = new WrittenAhead(c, (o) => o.metadata?.name ?? '');
    ahead.written(obj('a', '12'));
    expect(ahead.newest('a')?.metadata?.resourceVersion).toBe('12');
    c.update(obj('a', '11'));
    expect(ahead.newest('a')?.metadata?.resourceVersion).toBe('12');
    c.update(obj('a', '12'));
    expect(ahead.size).toBe(0);
    c.update(obj('a', '15'));
    expect(ahead.newest('a')?.metadata?.resourceVersion).toBe('15');
  });

  it('keeps nothing the cache already holds, nor a gone object, and forgets a deleted one', () => {
    const c = cache(obj('a', '10'), obj('b', '5'));
    const ahead = new WrittenAhead(c, (o) => o.metadata?.name ?? '');
    ahead.written(obj('a', '10'));
    ahead.written(undefined);
    expect(ahead.size).toBe(0);
    ahead.written(obj('b', '6'));
    c.delete('b');
    expect(ahead.size).toBe(0);
    expect(ahead.newest('b')).toBeUndefined();
  });
});
