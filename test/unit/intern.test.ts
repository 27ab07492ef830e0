import { Interner } from '../../kube/intern.js';

const owner = (name: string): object => ({ apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', name, uid: `uid-${name}`, controller: true });
const nodeImage = (node: string, createdAt: string): { metadata: { name: string }; spec: { images: Record<string, { tags: Record<string, unknown>[] }> } } => ({
  metadata: { name: node },
  spec: { images: { 'nginx': { tags: [{ tag: '1.25', createdAt, pullPolicy: { backoffLimit: 3, timeoutSeconds: 600 }, ownerReferences: [owner('job-a')], version: 0 }] } } },
});
// As JSON.parse gives them: nothing shared.
const parsed = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe('Interner', () => {
  it('shares equal small objects between objects and freezes what it shares', () => {
    const i = new Interner();
    const a = i.intern(parsed(nodeImage('n1', '2026-12-01T00:00:00Z')));
    const b = i.intern(parsed(nodeImage('n2', '2026-12-01T00:00:07Z')));
    const ta = a.spec.images['nginx']?.tags[0];
    const tb = b.spec.images['nginx']?.tags[0];
    expect(tb?.['pullPolicy']).toBe(ta?.['pullPolicy']);
    expect(tb?.['ownerReferences']).toBe(ta?.['ownerReferences']);
    // Different createdAt: the tag entries differ, and neither is given the other's value.
    expect(tb).not.toBe(ta);
    expect(tb?.['createdAt']).toBe('2026-12-01T00:00:07Z');
    expect(Object.isFrozen(ta?.['ownerReferences'])).toBe(true);
    expect(() => (ta?.['ownerReferences'] as object[]).push(owner('x'))).toThrow(TypeError);
    // The same tag entry on a third node is the first node's.
    const c = i.intern(parsed(nodeImage('n3', '2026-12-01T00:00:00Z')));
    expect(c.spec.images['nginx']?.tags[0]).toBe(ta);
    expect(c).toEqual(nodeImage('n3', '2026-12-01T00:00:00Z'));
  });

  it('keeps apart values that differ only in type or order', () => {
    const i = new Interner();
    const x = i.intern(parsed({ a: { v: 1, w: '2' }, b: { v: '1', w: '2' }, c: { w: '2', v: 1 }, d: ['1', 1], e: [1, '1'] }));
    expect(x.b).not.toBe(x.a);
    expect(x.c).not.toBe(x.a);
    expect(x.e).not.toBe(x.d);
    expect(x).toEqual({ a: { v: 1, w: '2' }, b: { v: '1', w: '2' }, c: { w: '2', v: 1 }, d: ['1', 1], e: [1, '1'] });
  });

  it('leaves large objects and empty ones unshared and writable', () => {
    const i = new Interner();
    const big = Object.fromEntries(Array.from({ length: 9 }, (_, k) => [`k${k}`, k]));
    const x = i.intern(parsed({ big, empty: {}, list: [] as number[] }));
    const y = i.intern(parsed({ big, empty: {}, list: [] as number[] }));
    expect(y.big).not.toBe(x.big);
    expect(Object.isFrozen(x.big)).toBe(false);
    expect(y.empty).not.toBe(x.empty);
    x.list.push(1);
    expect(y.list).toEqual([]);
  });

  it('interning an interned object again changes nothing', () => {
    const i = new Interner();
    const x = i.intern(parsed({ o: owner('a'), n: 1 }));
    expect(i.intern(x)).toBe(x);
    expect(i.intern({ wrap: x.o }).wrap).toBe(x.o);
  });

  it('forgets values that stop appearing, and keeps those still in use', () => {
    const i = new Interner({ strings: 4, objects: 4 });
    const kept = i.intern(parsed(owner('kept')));
    const gone = i.intern(parsed(owner('gone')));
    for (let k = 0; k < 3; k++) {
      for (let n = 0; n < 4; n++) i.intern(parsed(owner(`filler-${k}-${n}`)));
      // Still in use: found in the previous generation and carried into the current one.
      expect(i.intern(parsed(owner('kept')))).toBe(kept);
    }
    expect(i.intern(parsed(owner('gone')))).not.toBe(gone);
    expect(i.size().objects).toBeLessThanOrEqual(8);
    expect(i.size().strings).toBeLessThanOrEqual(8);
  });
});
