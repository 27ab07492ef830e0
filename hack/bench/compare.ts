// The comparison section of BENCHMARKS.md: this run's headline figures (recorded by the other
// benchmarks into BENCH_RESULTS) beside upstream's published ones, with a plain verdict per row.
//   node dist/hack/bench/compare.js RESULTS_JSONL
import { existsSync, readFileSync } from 'node:fs';

const file = process.argv[2] ?? '';
const figures = new Map<string, number>();
if (existsSync(file)) {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const { key, value } = JSON.parse(line) as { key: string; value: number };
    figures.set(key, value);
  }
}

const get = (k: string): number | undefined => figures.get(k);
const n = (v: number | undefined, digits = 0, unit = ''): string => (v === undefined ? 'not measured in this run' : `${v.toFixed(digits)}${unit}`);
const verdict = (v: number | undefined, ok: (x: number) => boolean, ahead: string, behind: string): string => (v === undefined ? '—' : ok(v) ? ahead : behind);

const rows: Array<[string, string, string, string]> = [];
const idle = get('daemonIdleRssMiB');
const busy = get('daemonBusyRssMiB');
rows.push([
  'kruise-daemon memory',
  'chart limits 50m CPU / 128 Mi',
  `RSS ${n(idle, 0, ' MiB')} idle, ${n(busy, 0, ' MiB')} with 200 tags (target ≤ 70 MiB)`,
  verdict(busy, (x) => x <= 70, 'ahead: fits the 128 Mi upstream limit with room, and meets the 70 MiB target', 'within the upstream limit, but above the 70 MiB target'),
]);
const watches = get('simWatchesPerDaemon');
rows.push([
  'watches per daemon',
  'one watch per node per resource it serves (NodeImage, CRR)',
  `${n(watches, 2)} open at most at any moment (its NodeImage by name, its node's active CRRs by label), over ${n(get('simNodes'))} simulated nodes`,
  verdict(watches, (x) => x <= 2, 'level: 2, both filtered server-side to the node\'s own objects', 'behind'),
]);
const writes = get('simWritesPerNodePerTag');
rows.push([
  'NodeImage status writes per node per tag',
  'not published; one write per phase change and per progress update',
  `${n(writes, 2)} (target ≤ 3)`,
  verdict(writes, (x) => x <= 3, 'meets the target', 'misses the target'),
]);
// hack/bench/manager-scale.ts runs in npm run bench:scale, not in npm run bench, whose run these
// rows then point to.
const managerScale = 'measured by npm run bench:scale: see "kruise-manager at scale"';
const rest = get('managerRestReconcilesPerSecond');
const cachedNodes = get('managerRestCachedNodes');
rows.push([
  'manager at rest with many jobs',
  'PR #2483: 887 reconciles/s at 95% CPU for 198 jobs on 989 nodes (before the fix)',
  rest === undefined
    ? managerScale
    : `${n(rest, 2)} reconciles/s, ${n(get('managerRestCpuPercent'), 2, '% of a core')} CPU, ${n(get('managerRestRssMiB'), 0, ' MiB')} RSS for ${n(get('managerRestJobs'))} jobs on ${n(get('managerRestNodes'))} nodes${cachedNodes !== undefined && cachedNodes > (get('managerRestNodes') ?? 0) ? ` (its caches holding ${n(cachedNodes)} Nodes and NodeImages)` : ''}`,
  verdict(rest, (x) => x < 1, 'ahead: nothing changing costs (almost) nothing', 'behind: reconciles while nothing changes'),
]);
const woke = get('managerWokeReconciles');
rows.push([
  'one tag changes on one node',
  `upstream 1.8/1.9 wakes every job of that image${woke === undefined ? '' : ` (${n(get('managerWokeUpstream'))} here)`}`,
  woke === undefined ? managerScale : `${n(woke)} reconcile(s)`,
  verdict(woke, (x) => x <= 2, 'ahead: only the owning job wakes', 'behind'),
]);
const simRss = get('simManagerPeakRssMiB');
rows.push([
  'manager memory under load',
  'not published',
  `peak ${n(simRss, 0, ' MiB')} with ${n(get('simNodes'))} nodes × ${n(get('simJobs'))} jobs (target < 500 MiB at 5,000 × 50)`,
  verdict(simRss, (x) => x < 500, 'within the target at the scale measured', 'above the target'),
]);
const k1 = get('pullPathRatio K=1');
const k20 = get('pullPathRatio K=20');
const k100 = get('pullPathRatio K=100');
rows.push([
  'pull path overhead (daemon vs direct CRI)',
  'not published',
  `K=1: ${n(k1, 2)}× (target ≤ 1.2), K=20: ${n(k20, 2)}×, K=100: ${n(k100, 2)}× (target ≤ 1.10)`,
  k1 === undefined || k20 === undefined || k100 === undefined ? '—' : k1 <= 1.2 && k20 <= 1.1 && k100 <= 1.1 ? 'meets the targets' : 'misses a target: see the pull-path table',
]);
const dReady = get('kruise-daemon readyMs');
rows.push(['daemon start-up to ready', 'not published', n(dReady, 0, ' ms'), '—']);

console.log('## Beside upstream\n');
console.log('Upstream figures are the published ones (the Helm chart\'s defaults, PR #2483\'s measurements, the watches its daemon opens); kruise-ts\'s are from this run.\n');
console.log('| what | upstream (Go) | kruise-ts, this run | verdict |\n| --- | --- | --- | --- |');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log();
