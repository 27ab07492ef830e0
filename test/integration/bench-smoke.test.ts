import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeObject } from '../../api/types/common.js';
import { kruise } from '../../kube/kruise.js';
import { Resource } from '../../kube/resource.js';
import { restClient } from '../helpers/kube.js';

// The benchmark harness still works (numbers are not judged here; npm run bench measures): the
// scale simulation at a tiny size against the real API server and the installed manager, the
// comparison it feeds, and the re-list memory benchmark.
const root = join(import.meta.dirname, '..', '..');
const envJson = process.env['KRUISE_TS_ENV_JSON'] ?? '';

function node(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'dist', script), ...args], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('benchmark harness (smoke)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kruise-ts-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs the scale simulation on a few nodes and the comparison from its figures', async () => {
    const results = join(dir, 'results.jsonl');
    const sim = await node('test/sim/scale.js', [envJson], { SIM_NODES: '8', SIM_JOBS: '3', SIM_PARALLELISM: '4', SIM_PULL_DELAY_MS: '50', SIM_REST_SECONDS: '5', BENCH_RESULTS: results });
    if (sim.code !== 0) console.error(sim.out);
    expect(sim.code).toBe(0);
    expect(sim.out).toContain('## Scale simulation: 8 simulated nodes');
    const figures = new Map(readFileSync(results, 'utf8').trim().split('\n').map((l) => {
      const { key, value } = JSON.parse(l) as { key: string; value: number };
      return [key, value] as const;
    }));
    expect(figures.get('simNodes')).toBe(8);
    // What the daemon code guarantees whatever the machine: its two filtered watches.
    expect(figures.get('simWatchesPerDaemon')).toBe(2);
    expect(figures.get('simWritesPerNodePerTag')).toBeGreaterThan(0);
    expect(figures.get('simManagerPeakRssMiB')).toBeGreaterThan(0);
    // The manager's fan-out is read from the API server's audit log: one write per selected node.
    expect(figures.get('simManagerWritesPerNode')).toBe(1);
    expect(figures.get('simFanoutRatio')).toBeGreaterThan(0);
    // The machine's CPU during the jobs (every process, from /proc/stat), split by who used it.
    expect(figures.get('simMachineCpuPercent')).toBeGreaterThan(0);
    // The manager's own watch and lists, and how steadily its writes went out, from the audit log.
    expect(sim.out).toMatch(/\| the manager's NodeImage watch while the jobs ran .* \| \d+, \d+\.\d s, \d+ lists( \(\d+\.\d s\))?; \d+, \d+\.\d s, \d+ lists( \(\d+\.\d s\))? \| \|/);
    expect(sim.out).toMatch(/\| the manager's NodeImage writes in flight during the one job's fan-out .* \| \d+\.\d s; \d+\.\d s \| \|/);
    // The window at rest opens only once the deleted jobs' images have left every NodeImage.
    expect(sim.out).toMatch(/\| the deleted jobs' images gone from every NodeImage .* \| \d+\.\d s; 0 \| \|/);
    expect(sim.out).toMatch(/\| at rest \(0\.1 min, from 10 s after that\): watch requests per daemon per 5 min \| \d+\.\d\d \| ≤ 1 \|/);
    // What thousands of clients cost the API server besides CPU and memory: its open sockets.
    expect(sim.out).toMatch(/\| API server CPU during the jobs; peak RSS; open file descriptors at most \| \d+% of a core; \d+ MiB; [1-9]\d* \| \|/);
    expect(sim.out).toMatch(/\| manager CPU during the jobs; peak RSS; open file descriptors at most \| \d+% of a core; \d+ MiB; [1-9]\d* \| < 500 MiB \|/);
    expect(sim.out).toMatch(/\| CPU during the jobs, in % of a core \(the machine has \d+\): .* \| (\d+)%; (\d+)%; (\d+)%; (\d+)%; -?(\d+)% \| \|/);
    // The jobs' progress by their status, and how the API server answered the manager's writes.
    expect(sim.out).toMatch(/\| the 3 jobs' tags succeeded \(placed\) by their status, by minutes into them \| (\d+ min: \d+ \(\d+\)(; )?)+ \| \|/);
    expect(sim.out).toMatch(/\| the manager's NodeImage spec writes answered 409 Conflict \/ 5xx .* \| one job: \d+ \/ 0; 3 jobs: \d+ \/ 0 \| \|/);

    const cmp = await node('hack/bench/compare.js', [results], {});
    expect(cmp.code).toBe(0);
    expect(cmp.out).toContain('## Beside upstream');
    expect(cmp.out).toMatch(/\| watches per daemon \| .* \| 2\.00 .* \| level/);
  }, 300_000);

  it('reports how far the jobs got when SIM_JOBS_MINUTES runs out before they complete', async () => {
    // Pulls of 30 s against 6 s to wait: neither phase can complete.
    const sim = await node('test/sim/scale.js', [envJson], { SIM_NODES: '4', SIM_JOBS: '2', SIM_PULL_DELAY_MS: '30000', SIM_JOBS_MINUTES: '0.1', BENCH_RESULTS: join(dir, 'deadline.jsonl') });
    if (sim.code !== 0) console.error(sim.out);
    expect(sim.code).toBe(0);
    expect(sim.out).toContain('2 job(s) not complete after 0.1 min (SIM_JOBS_MINUTES)');
    expect(sim.out).toMatch(/\| 2 ImagePullJobs at once over all nodes: \*\*not complete after 0\.1 min\*\* .* \| [0-2] of 2; 0 \/ 0 \/ [0-8]; \d+ \(.*\) \| \|/);
    expect(sim.out).toMatch(/\| the 2 jobs' tags succeeded \(placed\) by their status, by minutes into them \| 0 min: 0 \([0-8]\) \| \|/);
  }, 180_000);

  it('lists a few NodeImages read whole and streamed, each in its own process, and removes them', async () => {
    const run = await node('hack/bench/relist-memory.js', [envJson], { BENCH_RELIST_NODES: '12', BENCH_RELIST_TAGS: '3', BENCH_RUNS: '1' });
    if (run.code !== 0) console.error(run.out);
    expect(run.code).toBe(0);
    expect(run.out).toContain('## A re-list of 12 NodeImages: read whole vs streamed');
    expect(run.out).toMatch(/\| peak RSS \| \d+ MiB \(.*\) \| \d+ MiB \(.*\) \| \d+\.\d\d \|/);
    expect(run.out).toMatch(/\| list to cache \| \d+ ms \(.*\) \| \d+ ms \(.*\) \| \d+\.\d\d \|/);
    const left = await new Resource<KubeObject>(restClient(), kruise.nodeImages).list(undefined, { labelSelector: 'kruise-bench/relist=1' });
    expect(left.items).toEqual([]);
  }, 120_000);
});
