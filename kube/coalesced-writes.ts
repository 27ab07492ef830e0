import type { Slot } from './write-slots.js';

/** A change to an object: the changed copy, or undefined when it needs none. Pure. */
export type Mutation<T> = (current: T) => T | undefined;
/** One read-modify-write of the named object (kube/write.ts updateWithRetry): what the server holds afterwards. */
export type ReadModifyWrite<T> = (name: string, mutate: Mutation<T>) => Promise<T | undefined>;

interface OpenWrite<T> {
  readonly mutations: Array<Mutation<T>>;
  readonly result: Promise<T | undefined>;
}

/**
 * Read-modify-writes merged per object. A write that has not started yet takes in every change
 * asked of the same object meanwhile: several ImagePullJobs placing their tags on one NodeImage
 * cost one write, not one each (5 jobs over 5,000 nodes were 25,000 writes, each also a chance of a
 * 409 Conflict against another job's write to the same NodeImage). Writes to one object go one at
 * a time, so they never conflict with each other; a change asked while one is in flight goes into
 * the next.
 */
export class CoalescedWrites<T> {
  /** Per object: the write still waiting (for the one before it, or for a slot). */
  private readonly open = new Map<string, OpenWrite<T>>();
  /** Per object: the last write asked for, settled; the next one starts after it. */
  private readonly last = new Map<string, Promise<void>>();

  constructor(private readonly write: ReadModifyWrite<T>) {}

  /**
   * Applies `mutate` to the named object, in a write taken from `slot` unless a waiting write to
   * the same object takes it in. Resolves (or rejects) with that write, which may carry others'
   * changes too.
   */
  update(name: string, mutate: Mutation<T>, slot: Slot): Promise<T | undefined> {
    const waiting = this.open.get(name);
    if (waiting) {
      waiting.mutations.push(mutate);
      return waiting.result;
    }
    const mutations = [mutate];
    const before = this.last.get(name);
    const result = (async () => {
      await before;
      return slot(() => {
        // From here on the mutations are fixed; a retry after a conflict applies the same ones.
        this.open.delete(name);
        return this.write(name, (current) => applyAll(mutations, current));
      });
    })();
    this.open.set(name, { mutations, result });
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.last.set(name, settled);
    void settled.then(() => {
      if (this.last.get(name) === settled) this.last.delete(name);
    });
    return result;
  }
}

/** Each mutation in turn on what the ones before it made; undefined when none changed anything. */
function applyAll<T>(mutations: ReadonlyArray<Mutation<T>>, current: T): T | undefined {
  let changed: T | undefined;
  for (const m of mutations) changed = m(changed ?? current) ?? changed;
  return changed;
}
