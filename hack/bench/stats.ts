import { appendFileSync } from 'node:fs';
// Small helpers for benchmark tables: several runs, median and spread.
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(xs: number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
  return { median, min: s[0] ?? 0, max: s[s.length - 1] ?? 0, runs: s.length };
}

export function fmt(s: Summary, unit = 'ms'): string {
  return `${s.median.toFixed(0)} ${unit} (${s.min.toFixed(0)}–${s.max.toFixed(0)}, n=${s.runs})`;
}

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** The p-th percentile (0–100) by the nearest-rank method. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return 0;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
}

/**
 * Keeps a headline figure for the comparison section (hack/bench/compare.ts): one JSON line per
 * figure in the file BENCH_RESULTS names, when it names one.
 */
export function record(key: string, value: number): void {
  const file = process.env['BENCH_RESULTS'];
  if (file) appendFileSync(file, `${JSON.stringify({ key, value })}\n`);
}
