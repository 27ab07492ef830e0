import type { Rfc3339 } from './types/common.js';

/** Formats like Kubernetes' metav1.Time: UTC, whole seconds ("2024-05-01T10:00:00Z"). */
export function formatTime(time: Date): Rfc3339 {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/** True for the date-time strings the API server accepts for `format: date-time` fields. */
export function isRfc3339(value: string): boolean {
  return rfc3339.test(value) && !Number.isNaN(Date.parse(value));
}

/** Milliseconds since the epoch of a wire timestamp; undefined when absent or unreadable. */
export function timeMs(t: Rfc3339 | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}
