/**
 * Whether `actual` (an object as the API server returns it) holds every field `wanted` sets, with
 * the same values. The server orders keys its own way and fills in defaults (a webhook's
 * namespaceSelector, objectSelector and reinvocationPolicy, a Service's port), so serialised JSON
 * never matches, and a writer comparing that way updates an unchanged object on every resync.
 */
export function covers(actual: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) return Array.isArray(actual) && actual.length === wanted.length && wanted.every((w, i) => covers(actual[i], w));
  if (wanted !== null && typeof wanted === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const fields = actual as Record<string, unknown>;
    return Object.entries(wanted).every(([k, w]) => w === undefined || covers(fields[k], w));
  }
  return actual === wanted;
}
