import { ApiError } from './rest.js';
import type { Slot } from './write-slots.js';

/** A change to an object: the changed copy, or undefined when it needs none. Pure. */
export type Mutation<T> = (current: T) => T | undefined;
/** One read-modify-write of the named object (kube/write.ts updateWithRetry): what the server holds afterwards. */
export type ReadModifyWrite<T> = (name: string, mutate: Mutation<T>) => Promise<T | undefined>;

interface Change<T> {
  readonly mutate: Mutation<T>;
  readonly resolve: (written: T | undefined) => void;
  readonly reject: (err: unknown) => void;
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
  /** Per object: the changes of the write still waiting (for the one before it, or for a slot). */
  private readonly open = new Map<string, Array<Change<T>>>();
  /** Per object: the last write asked for, settled; the next one starts after it. */
  private readonly last = new Map<string, Promise<void>>();

  constructor(private readonly write: ReadModifyWrite<T>) {}

  /**
   * Applies `mutate` to the named object, in a write taken from `slot` unless a waiting write to
   * the same object takes it in. Resolves (or rejects) with the write that carried it, which may
   * carry others' changes too; after a refused merge, with its own write.
   */
  update(name: string, mutate: Mutation<T>, slot: Slot): Promise<T | undefined> {
    return new Promise((resolve, reject) => {
      const change = { mutate, resolve, reject };
      const waiting = this.open.get(name);
      if (waiting) {
        waiting.push(change);
        return;
      }
      const changes = [change];
      this.open.set(name, changes);
      const before = this.last.get(name) ?? Promise.resolve();
      const run = (): Promise<void> =>
        slot(() => {
          // From here on the changes are fixed; a retry after a conflict applies the same ones.
          this.open.delete(name);
          return this.writeAll(name, changes);
        });
      // writeAll settles every change itself and never rejects; going on after a rejection anyway
      // keeps a future bug there from stalling every later write to this object.
      const settled = before.then(run, run);
      this.last.set(name, settled);
      const forget = (): void => {
        if (this.last.get(name) === settled) this.last.delete(name);
      };
      void settled.then(forget, forget);
    });
  }

  private async writeAll(name: string, changes: ReadonlyArray<Change<T>>): Promise<void> {
    try {
      const written = await this.write(name, (current) => applyAll(changes, current));
      for (const c of changes) c.resolve(written);
    } catch (err) {
      if (changes.length === 1 || !refused(err)) {
        for (const c of changes) c.reject(err);
        return;
      }
      // The server refused the merged object: one job's change must not fail the others that rode
      // with it, so each goes again on its own, one after the other.
      for (const c of changes) {
        try {
          c.resolve(await this.write(name, c.mutate));
        } catch (e) {
          c.reject(e);
        }
      }
    }
  }
}

/** Each change in turn on what the ones before it made; undefined when none changed anything. */
function applyAll<T>(changes: ReadonlyArray<Change<T>>, current: T): T | undefined {
  let changed: T | undefined;
  for (const c of changes) changed = c.mutate(changed ?? current) ?? changed;
  return changed;
}

/** The server will refuse this object whatever its version: invalid, or too large. */
function refused(err: unknown): boolean {
  return err instanceof ApiError && (err.invalid || err.status === 413);
}
