import { ApiError } from './rest.js';
import type { KubeObject } from '../api/types/common.js';
import { testsHold, type JsonPatchOp } from './json-patch.js';
import { PATCH_JSON, type Resource } from './resource.js';

export interface UpdateOptions<T> {
  /** Write the status subresource instead of the object. */
  status?: boolean;
  /** A copy to start from (usually the informer's); on conflict the object is read fresh. */
  initial?: T | undefined;
  attempts?: number;
  /**
   * The change as a JSON patch whose `test` operations guard exactly what the mutation read, or
   * undefined for a PUT guarded by the resourceVersion. A PUT fails on any write in between, even
   * one to a part the change never looked at (a daemon's status beside the manager's spec).
   */
  asPatch?: (current: T, next: T) => JsonPatchOp[] | undefined;
}

/**
 * Read-modify-write with optimistic concurrency: `mutate` gets a private copy and returns the object
 * to write, or undefined when nothing needs to change. A 409 Conflict re-reads and re-applies, like
 * client-go's RetryOnConflict; so does a guarded patch (`asPatch`) whose tests no longer hold.
 * Returns what the server holds afterwards: undefined if the object is gone, as its Status says (a
 * bare 404 throws: ApiError.objectNotFound).
 */
export async function updateWithRetry<T extends KubeObject>(
  res: Resource<T>,
  namespace: string | undefined,
  name: string,
  mutate: (current: T) => T | undefined,
  opts: UpdateOptions<T> = {},
): Promise<T | undefined> {
  const attempts = opts.attempts ?? 8;
  let current: T | undefined = opts.initial;
  if (current !== undefined) res.mayGet(namespace, name);
  // A refused guarded patch: after the re-read, its tests tell a lost race (apply again) from an
  // invalid change (the server's 422 stands).
  let refused: { patch: JsonPatchOp[]; err: ApiError } | undefined;
  for (let i = 0; ; i++) {
    if (!current) {
      try {
        current = await res.get(namespace, name);
      } catch (err) {
        if (err instanceof ApiError && err.objectNotFound) return undefined;
        throw err;
      }
    }
    if (refused) {
      if (testsHold(refused.patch, current)) throw refused.err;
      refused = undefined;
    }
    const next = mutate(structuredClone(current));
    if (!next) return current;
    const patch = opts.status ? undefined : opts.asPatch?.(current, next);
    try {
      if (patch) return await res.patch(namespace, name, patch, PATCH_JSON);
      return await (opts.status ? res.updateStatus(next) : res.update(next));
    } catch (err) {
      if (!(err instanceof ApiError) || i + 1 >= attempts) throw err;
      current = undefined;
      if (patch && err.status === 422) {
        refused = { patch, err };
        continue;
      }
      if (!err.conflict) throw err;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * (i + 1)));
    }
  }
}

/** Deletes, treating "already gone" (ApiError.objectNotFound) as success. */
export async function deleteIfExists<T extends KubeObject>(res: Resource<T>, namespace: string | undefined, name: string, uid?: string): Promise<boolean> {
  try {
    await res.delete(namespace, name, uid ? { uid } : {});
    return true;
  } catch (err) {
    if (err instanceof ApiError && (err.objectNotFound || (err.status === 409 && uid !== undefined))) return false;
    throw err;
  }
}

/** Creates, treating AlreadyExists as success; returns whether this call created it. */
export async function createIfMissing<T extends KubeObject>(res: Resource<T>, obj: T): Promise<boolean> {
  try {
    await res.create(obj);
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.alreadyExists) return false;
    throw err;
  }
}
