// resourceVersions are opaque to clients by contract, but every API server backed by etcd hands out
// its revisions, which are integers that grow. Comparing them lets a client tell which of two copies
// is newer; versions that are not integers only ever compare equal.

/** -1, 0 or 1 as `a` is older, the same or newer than `b`; undefined when they cannot be ordered. */
function compareResourceVersions(a: string | undefined, b: string | undefined): -1 | 0 | 1 | undefined {
  if (a === undefined || b === undefined || a === '' || b === '') return undefined;
  if (a === b) return 0;
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x === y ? 0 : x > y ? 1 : -1;
}

/** Whether resourceVersion `seen` is at least `wanted` (the cache caught up with a write). */
export function resourceVersionAtLeast(seen: string | undefined, wanted: string): boolean {
  const c = compareResourceVersions(seen, wanted);
  return c !== undefined && c >= 0;
}

/** Whether `a` is strictly newer than `b`. */
export function newerResourceVersion(a: string | undefined, b: string | undefined): boolean {
  return compareResourceVersions(a, b) === 1;
}
