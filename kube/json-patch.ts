// RFC 6902 JSON patches as far as kruise-ts writes them: `test` preconditions and whole values
// added (or replaced). The API server applies a JSON patch to the object it holds at that moment
// (retrying its own storage conflicts), so the `test` operations are the only concurrency guard.
import { jsonEqual } from '../api/json-equal.js';

export interface JsonPatchOp {
  op: 'test' | 'add';
  path: string;
  value: unknown;
}

/** An RFC 6901 pointer to the member reached by `segments` ("/" and "~" escaped). */
export function pointer(...segments: readonly string[]): string {
  return segments.map((s) => `/${s.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

function valueAt(doc: unknown, path: string): { found: boolean; value?: unknown } {
  let at: unknown = doc;
  for (const raw of path.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (at === null || typeof at !== 'object' || !Object.prototype.hasOwnProperty.call(at, key)) return { found: false };
    at = (at as Record<string, unknown>)[key];
  }
  return { found: true, value: at };
}

/**
 * Whether every `test` of the patch holds on `doc`. After the server refused a guarded patch with
 * 422 (a failed test and an invalid result look alike on the wire), this tells a moved object,
 * worth another try on a fresh copy, from a change the server will refuse every time.
 */
export function testsHold(patch: readonly JsonPatchOp[], doc: unknown): boolean {
  return patch.every((op) => {
    if (op.op !== 'test') return true;
    const at = valueAt(doc, op.path);
    return at.found && jsonEqual(at.value, op.value);
  });
}
