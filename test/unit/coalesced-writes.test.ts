import { CoalescedWrites, type Mutation } from '../../kube/coalesced-writes.js';
import { ApiError } from '../../kube/rest.js';
import { WriteSlots } from '../../kube/write-slots.js';

const tick = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

type Obj = { tags: string[] };

/** An object store whose writes finish when told, recording each write's object and changes. */
function store(initial: Record<string, Obj>) {
  const objects = new Map(Object.entries(initial));
  const writes: Array<{ name: string; mutations: number }> = [];
  const waiting: Array<() => void> = [];
  let inFlight = 0;
  let attempts = 0;
  let mostInFlightPerObject = 0;
  const running = new Map<string, number>();
  const write = (name: string, mutate: Mutation<Obj>): Promise<Obj | undefined> =>
    new Promise((resolve, reject) => {
      inFlight++;
      attempts++;
      running.set(name, (running.get(name) ?? 0) + 1);
      mostInFlightPerObject = Math.max(mostInFlightPerObject, running.get(name) ?? 0);
      waiting.push(() => {
        inFlight--;
        running.set(name, (running.get(name) ?? 1) - 1);
        const current = objects.get(name);
        if (current === undefined) return reject(new Error(`${name} not found`));
        const next = mutate(structuredClone(current));
        if (next?.tags.includes('bad')) return reject(new ApiError(422, 'Invalid', 'bad tag', 'PUT', `/objects/${name}`));
        writes.push({ name, mutations: next ? next.tags.length - current.tags.length : 0 });
        if (next) objects.set(name, next);
        resolve(next ?? current);
      });
    });
  return {
    objects,
    writes,
    write,
    inFlight: () => inFlight,
    attempts: () => attempts,
    mostInFlightPerObject: () => mostInFlightPerObject,
    finishOne: () => waiting.shift()?.(),
    finishAll: async () => {
      while (waiting.length > 0) {
        waiting.shift()?.();
        await tick();
      }
    },
  };
}

const addTag =
  (tag: string): Mutation<Obj> =>
  (o) =>
    o.tags.includes(tag) ? undefined : { tags: [...o.tags, tag] };

describe('CoalescedWrites', () => {
  it('writes the changes several callers ask of one object while its write waits for a slot once, in the order asked', async () => {
    const s = store({ n1: { tags: [] }, n2: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slots = new WriteSlots(1);
    const a = slots.forReconcile();
    const b = slots.forReconcile();
    // n1 takes the only slot; n2's write waits for it and takes in b's and c's changes.
    const results = [w.update('n1', addTag('a'), a), w.update('n2', addTag('a'), a), w.update('n2', addTag('b'), b), w.update('n2', addTag('c'), b)];
    await tick();
    expect(s.inFlight()).toBe(1);
    await s.finishAll();
    const [r1, r2, r3, r4] = await Promise.all(results);
    expect(r1?.tags).toEqual(['a']);
    expect(r2?.tags).toEqual(['a', 'b', 'c']);
    expect(r3).toBe(r2);
    expect(r4).toBe(r2);
    expect(s.writes).toEqual([
      { name: 'n1', mutations: 1 },
      { name: 'n2', mutations: 3 },
    ]);
  });

  it('puts a change asked while the object is being written into the next write, after that one', async () => {
    const s = store({ n1: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(8).forReconcile();
    const first = w.update('n1', addTag('a'), slot);
    await tick();
    expect(s.inFlight()).toBe(1);
    const second = [w.update('n1', addTag('b'), slot), w.update('n1', addTag('c'), slot)];
    await tick();
    // Free slots, but the object's write in flight goes first: two writes to it would conflict.
    expect(s.inFlight()).toBe(1);
    await s.finishAll();
    expect((await first)?.tags).toEqual(['a']);
    expect((await Promise.all(second)).map((r) => r?.tags)).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(s.writes.map((x) => x.mutations)).toEqual([1, 2]);
    expect(s.mostInFlightPerObject()).toBe(1);
  });

  it('writes different objects at once, up to the slots', async () => {
    const s = store({ n1: { tags: [] }, n2: { tags: [] }, n3: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(2).forReconcile();
    const all = ['n1', 'n2', 'n3'].map((n) => w.update(n, addTag('a'), slot));
    await tick();
    expect(s.inFlight()).toBe(2);
    await s.finishAll();
    await Promise.all(all);
    expect(s.writes).toHaveLength(3);
  });

  it('hands a failed write to every caller whose change it carried, and still writes the object next time', async () => {
    const s = store({ n1: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(1).forReconcile();
    const blocker = w.update('n1', addTag('x'), slot);
    const carried = [w.update('n1', addTag('a'), slot), w.update('n1', addTag('b'), slot)];
    const settled = Promise.allSettled(carried);
    await tick();
    s.objects.delete('n1');
    s.finishOne();
    await expect(blocker).rejects.toThrow('n1 not found');
    expect((await settled).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    s.objects.set('n1', { tags: [] });
    const again = w.update('n1', addTag('c'), slot);
    await tick();
    s.finishOne();
    expect((await again)?.tags).toEqual(['c']);
  });

  it('writes the others on their own when the server refuses the merged object, and fails only the change it refuses', async () => {
    const s = store({ n1: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(1).forReconcile();
    const blocker = w.update('n1', addTag('x'), slot);
    await tick();
    const carried = Promise.allSettled([w.update('n1', addTag('a'), slot), w.update('n1', addTag('bad'), slot), w.update('n1', addTag('b'), slot)]);
    await s.finishAll();
    await blocker;
    const [a, bad, b] = await carried;
    expect(a).toEqual({ status: 'fulfilled', value: { tags: ['x', 'a'] } });
    expect(bad?.status).toBe('rejected');
    expect(b).toEqual({ status: 'fulfilled', value: { tags: ['x', 'a', 'b'] } });
    expect(s.mostInFlightPerObject()).toBe(1);
  });

  it('fails every carried change together on an error that is not the object\'s fault', async () => {
    const s = store({ n1: { tags: [] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(1).forReconcile();
    const blocker = w.update('n1', addTag('x'), slot);
    await tick();
    const carried = Promise.allSettled([w.update('n1', addTag('a'), slot), w.update('n1', addTag('b'), slot)]);
    await tick();
    s.finishOne();
    await blocker;
    await tick();
    s.objects.delete('n1');
    await s.finishAll();
    expect((await carried).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // The blocker's write and one for both, not one each.
    expect(s.attempts()).toBe(2);
  });

  it('goes on with the others, and with later writes to the object, when the writer throws instead of rejecting', async () => {
    const s = store({ n1: { tags: [] } });
    // The writer fails at once, before returning a promise, for the refused change on its own.
    const throwing = (name: string, mutate: Mutation<Obj>): Promise<Obj | undefined> => {
      if (mutate({ tags: [] })?.tags.join() === 'bad') throw new Error('writer broke');
      return s.write(name, mutate);
    };
    const w = new CoalescedWrites<Obj>(throwing);
    const slot = new WriteSlots(1).forReconcile();
    const carried = Promise.allSettled([w.update('n1', addTag('bad'), slot), w.update('n1', addTag('a'), slot)]);
    await tick();
    await s.finishAll();
    const [bad, a] = await carried;
    expect(bad).toEqual({ status: 'rejected', reason: new Error('writer broke') });
    expect(a).toEqual({ status: 'fulfilled', value: { tags: ['a'] } });
    const again = w.update('n1', addTag('c'), slot);
    await tick();
    await s.finishAll();
    expect((await again)?.tags).toEqual(['a', 'c']);
  });

  it('makes no change when none of the carried changes needs one', async () => {
    const s = store({ n1: { tags: ['a'] } });
    const w = new CoalescedWrites<Obj>(s.write);
    const slot = new WriteSlots(1).forReconcile();
    const all = [w.update('n1', addTag('a'), slot), w.update('n1', addTag('a'), slot)];
    await tick();
    await s.finishAll();
    expect((await Promise.all(all)).map((r) => r?.tags)).toEqual([['a'], ['a']]);
    expect(s.writes).toEqual([{ name: 'n1', mutations: 0 }]);
  });
});
