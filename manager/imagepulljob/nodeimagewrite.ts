import type { ImageSpec, NodeImage } from '../../api/types/nodeimage.js';
import { ApiError } from '../../kube/rest.js';
import { PATCH_JSON, PATCH_MERGE, type Resource } from '../../kube/resource.js';

export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add' | 'replace'; path: string; value: unknown }
  | { op: 'remove'; path: string };

/** RFC 6901: '~' and '/' (every registry image name has one) escaped in a path segment. */
function pointer(...segments: string[]): string {
  return segments.map((s) => `/${s.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/**
 * A JSON patch carrying the difference between two NodeImage specs image by image, each change
 * guarded by a test that the image's entry is still what it was based on. The guard is as narrow as
 * the change: the object's resourceVersion moves with every status write of its daemon and every
 * other job's image, so an update under it conflicted about twice per write when jobs ran beside
 * busy daemons. A test for null passes for a missing member (evanphx/json-patch patch.go, `test`, which
 * the API server applies JSON patches with), which guards an added image against another writer
 * adding it first. Undefined
 * when the base has no spec.images to patch into (the NodeImage controller drops an empty one).
 */
export function imageEntryPatch(base: NodeImage, next: NodeImage): JsonPatchOp[] | undefined {
  const before = base.spec?.images;
  if (before === undefined) return undefined;
  const after = next.spec?.images ?? {};
  const ops: JsonPatchOp[] = [];
  const changed = (a: ImageSpec | undefined, b: ImageSpec | undefined): boolean => JSON.stringify(a) !== JSON.stringify(b);
  for (const image of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const was = before[image];
    const now = after[image];
    if (!changed(was, now)) continue;
    const path = pointer('spec', 'images', image);
    ops.push({ op: 'test', path, value: was ?? null });
    ops.push(now === undefined ? { op: 'remove', path } : { op: was === undefined ? 'add' : 'replace', path, value: now });
  }
  return ops;
}

/**
 * The API server's answer to a JSON patch it could not apply: a test that failed, so someone changed
 * that entry first. Kubernetes says only this generic sentence (apiserver endpoints/handlers/patch.go),
 * where a NodeImage the schema refuses is "... is invalid: <field>".
 */
function testFailed(err: unknown): boolean {
  return err instanceof ApiError && err.status === 422 && /rejected our request due to an error in our request|test operation|testing value/i.test(err.message);
}

/**
 * Read-modify-write of a NodeImage's spec.images as a guarded JSON patch (imageEntryPatch): `mutate`
 * gets a private copy and returns the NodeImage to have, or undefined for no change. A failed guard
 * re-reads and re-applies, as updateWithRetry does on a conflict. Returns what the server holds
 * afterwards (undefined if the NodeImage is gone).
 */
export async function patchNodeImageSpec(
  api: Resource<NodeImage>,
  name: string,
  mutate: (current: NodeImage) => NodeImage | undefined,
  initial: NodeImage | undefined,
  attempts = 8,
): Promise<NodeImage | undefined> {
  let current = initial;
  if (current !== undefined) api.mayGet(undefined, name);
  for (let i = 0; ; i++) {
    if (current === undefined) {
      try {
        current = await api.get(undefined, name);
      } catch (err) {
        if (err instanceof ApiError && err.notFound) return undefined;
        throw err;
      }
    }
    const next = mutate(structuredClone(current));
    if (next === undefined) return current;
    const ops = imageEntryPatch(current, next);
    if (ops?.length === 0) return current;
    try {
      if (ops !== undefined) return await api.patch(undefined, name, ops, PATCH_JSON);
      // The map first, unguarded: merging an empty map never removes anything, and every job then
      // adds its own image under its own guard instead of all racing to create the map.
      current = await api.patch(undefined, name, { spec: { images: {} } }, PATCH_MERGE);
      if (current.spec?.images === undefined) throw new Error(`NodeImage ${name} has no spec.images after a merge patch creating it`);
    } catch (err) {
      if (err instanceof ApiError && err.notFound) return undefined;
      if (!testFailed(err) || i + 1 >= attempts) throw err;
      current = undefined;
      await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * (i + 1)));
    }
  }
}
