// Pull-path benchmark: K distinct images through NodeImage -> kruise-daemon -> containerd against
// the same K by direct concurrent CRI calls, side by side, plus the daemon's memory footprint.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { CriClient } from '../../daemon/cri/client.js';
import { DAEMON_V8_FLAGS } from '../v8-flags.js';
import { cgroupName, nodeInPodMemory, podMemoryLimitOf, removePodMemoryCgroup } from '../pod-memory.js';
import { exited, machineCpuMs, rssMiB } from './proc.js';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import type { NodeImage, ImageSpec } from '../../api/types/nodeimage.js';
import { kruise } from '../../kube/kruise.js';
import { RestClient } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import { fmt, summarize, record } from './stats.js';

interface BenchEnv {
  criSocket: string;
  registryOpen: string;
  kubeconfig: string;
}

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as BenchEnv;
const runs = Number(process.env['BENCH_RUNS'] ?? 5);
const root = join(import.meta.dirname, '..', '..', '..');
const cri = new CriClient(env.criSocket);
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const nis = new Resource<NodeImage>(rest, kruise.nodeImages);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function images(k: number, offset: number): string[] {
  return Array.from({ length: k }, (_, i) => `${env.registryOpen}/many-${String(offset + i).padStart(3, '0')}`);
}

async function removeAll(refs: string[]): Promise<void> {
  await Promise.all(refs.map((r) => cri.image('RemoveImage', { image: { image: r } })));
}

// One daemon at a time, in a memory cgroup of its pod's limit (hack/pod-memory.ts), named after this run.
const cgroup = cgroupName('daemon', process.pid);

function spawnDaemon(node: string, workers: number): ChildProcess {
  return spawn(
    ...nodeInPodMemory(
      [...DAEMON_V8_FLAGS, join(root, 'dist', 'daemon', 'main.js'), '--node-name', node, '--kubeconfig', env.kubeconfig, '--runtime-endpoint', `unix://${env.criSocket}`, '--addr', '127.0.0.1:0', '--max-workers-for-pull-image', String(workers), '--log-level', 'warn'],
      'daemon',
      cgroup,
    ),
    { stdio: 'ignore' },
  );
}

async function stopDaemon(proc: ChildProcess): Promise<void> {
  proc.kill('SIGTERM');
  await exited(proc);
  removePodMemoryCgroup(cgroup);
}

/**
 * Starts watching `node` for every one of `n` tags done, from the current resourceVersion, before
 * the caller's clock starts: the reader is already watching, as the manager's informer is, and the
 * watch's set-up is not counted. Waits on a watch, not by polling: the measuring side must not load
 * the machine it measures.
 */
async function watchDone(node: string, n: number, timeoutMs = 600_000): Promise<() => Promise<void>> {
  const from = (await nis.list(undefined, { limit: 1 })).metadata?.resourceVersion;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  let done = false;
  let failed = 0;
  const check = (ni: NodeImage): void => {
    const st = ni.status;
    if ((st?.desired ?? 0) === n && (st?.succeeded ?? 0) + (st?.failed ?? 0) >= n) {
      done = true;
      failed = st?.failed ?? 0;
      ac.abort();
    }
  };
  const watching = (async () => {
    let rv = from;
    while (!done && !ac.signal.aborted) {
      await nis.watch(undefined, { fieldSelector: `metadata.name=${node}`, ...(rv ? { resourceVersion: rv } : {}) }, (ev) => {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') {
          rv = ev.object.metadata?.resourceVersion;
          check(ev.object);
        }
      }, ac.signal);
    }
  })();
  return async () => {
    try {
      await watching;
    } finally {
      clearTimeout(timer);
    }
    if (!done) throw new Error(`${node}: not done in time`);
    if (failed > 0) throw new Error(`${node}: ${failed} pulls failed`);
  };
}

const tagSpec = (tag: string, policy: 'Always' | 'IfNotPresent' = 'Always') => ({
  tag,
  version: 0,
  createdAt: new Date().toISOString(),
  imagePullPolicy: policy,
  pullPolicy: { timeoutSeconds: 300, backoffLimit: 1, ttlSecondsAfterFinished: 300 },
});

function specOf(refs: string[], tag: string): Record<string, ImageSpec> {
  const spec: Record<string, ImageSpec> = {};
  for (const r of refs) spec[r] = { tags: [tagSpec(tag)] };
  return spec;
}

/**
 * Writes the NodeImage for `refs` and times it until its status reports every tag done: through the
 * daemon, or, with `finish`, through the plain client's own status write (the API floor).
 */
async function timeNodeImage(node: string, refs: string[], tag: string, finish?: (created: NodeImage) => Promise<void>): Promise<number> {
  const done = await watchDone(node, refs.length);
  const t0 = performance.now();
  const created = await nis.create({ metadata: { name: node, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: { images: specOf(refs, tag) } });
  await finish?.(created);
  await done();
  const ms = performance.now() - t0;
  await nis.delete(undefined, node);
  return ms;
}

const throughDaemon = (node: string, refs: string[], tag = '1.0'): Promise<number> => timeNodeImage(node, refs, tag);

/**
 * The API's own share of any NodeImage path, with no daemon: a plain client creates the same
 * NodeImage, writes a status reporting every tag Succeeded at once, and the same watch sees it.
 */
const apiFloor = (node: string, refs: string[], tag = '1.0'): Promise<number> =>
  timeNodeImage(node, refs, tag, async (created) => {
    const now = new Date().toISOString();
    const imageStatuses = Object.fromEntries(refs.map((r) => [r, { tags: [{ tag, version: 0, phase: 'Succeeded' as const, progress: 100, startTime: now, completionTime: now }] }]));
    await nis.updateStatus({ ...created, status: { desired: refs.length, succeeded: refs.length, failed: 0, pulling: 0, imageStatuses } });
  });

async function direct(refs: string[], tag = '1.0'): Promise<number> {
  const t0 = performance.now();
  await Promise.all(refs.map((r) => cri.pullImage(`${r}:${tag}`, undefined, undefined)));
  return performance.now() - t0;
}

const rows: string[][] = [];
const cases: Array<[string, string[]]> = [
  ['K=1', images(1, 1)],
  ['K=20', images(20, 2)],
  ['K=100', images(100, 1)],
  ['one 52 MB image', [`${env.registryOpen}/big`]],
];
for (const [label, refs] of cases) {
  // The daemon gets as many workers as the direct run has concurrent calls: only the path differs.
  const node = `bench-${label.replace(/[^a-z0-9]/gi, '').toLowerCase()}`;
  await nis.delete(undefined, node).catch(() => undefined);
  await nis.delete(undefined, `${node}-floor`).catch(() => undefined);
  const proc = spawnDaemon(node, refs.length);
  await sleep(1500);
  const d: number[] = [];
  const k: number[] = [];
  const floor: number[] = [];
  const cpuD: number[] = [];
  const cpuK: number[] = [];
  // A failing run must not leave its daemon behind.
  try {
    // A run from a clean runtime, with the machine's CPU time it took.
    const timedRun = (times: number[], cpu: number[], pull: () => Promise<number>) => async (): Promise<void> => {
      await removeAll(refs.map((x) => `${x}:1.0`));
      const c0 = machineCpuMs();
      times.push(await pull());
      cpu.push(machineCpuMs() - c0);
    };
    const directRun = timedRun(d, cpuD, () => direct(refs));
    const daemonRun = timedRun(k, cpuK, () => throughDaemon(node, refs));
    // Each goes first in every other run, so neither always meets the machine as the other left it.
    for (let r = 0; r < runs; r++) {
      for (const run of r % 2 === 0 ? [directRun, daemonRun] : [daemonRun, directRun]) await run();
      floor.push(await apiFloor(`${node}-floor`, refs));
    }
  } finally {
    await stopDaemon(proc);
  }
  const ds = summarize(d);
  const ks = summarize(k);
  const fs = summarize(floor);
  const extraCpu = summarize(cpuK.map((c, i) => c - (cpuD[i] ?? 0)));
  rows.push([label, fmt(ds), fmt(ks), (ks.median / ds.median).toFixed(2), fmt(fs), `${(ks.median - ds.median - fs.median).toFixed(0)} ms`, `${extraCpu.median.toFixed(0)} ms`]);
  record(`pullPathRatio ${label}`, ks.median / ds.median);
}

// Footprint: idle, then holding 200 tags (100 images x tag and digest, already present).
const node = 'bench-footprint';
await nis.delete(undefined, node).catch(() => undefined);
const proc = spawnDaemon(node, 5);
await sleep(5000);
const idle = rssMiB(proc.pid ?? 0);
const refs = images(100, 1);
const spec: Record<string, ImageSpec> = {};
for (const r of refs) {
  const res = await fetch(`http://${r.split('/')[0]}/v2/${r.split('/').slice(1).join('/')}/manifests/1.0`, { method: 'HEAD', headers: { Accept: 'application/vnd.oci.image.manifest.v1+json' } });
  spec[r] = { tags: [tagSpec('1.0', 'IfNotPresent'), tagSpec(res.headers.get('docker-content-digest') ?? '', 'IfNotPresent')] };
}
const footprintDone = await watchDone(node, 200);
await nis.create({ metadata: { name: node, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: { images: spec } });
await footprintDone();
await sleep(3000);
const busy = rssMiB(proc.pid ?? 0);
const limit = podMemoryLimitOf(proc.pid ?? 0);
await stopDaemon(proc);
await nis.delete(undefined, node);

console.log('## Pull path: NodeImage → kruise-daemon → containerd vs direct concurrent CRI calls\n');
console.log(
  `Cold pulls from the local registry into one containerd; the daemon runs with as many pull workers as the direct run has concurrent calls, and the two take turns at going first. Time is from writing the NodeImage to its status reporting every tag Succeeded, read by a watch opened before the write (as the manager's informer is). The API floor is what any NodeImage path costs before a pull: a plain client, no daemon, creates the same NodeImage and writes its finished status at once, seen by the same watch. The residue is what is left of the daemon's time after the direct pull and that floor. Extra CPU is the whole machine's CPU time (every process, all cores) of a run through the daemon minus that of the direct run beside it: on ${cpus().length} cores busy with the pulls, it is time the pulls wait.\n`,
);
console.log('| case | direct CRI | through the daemon | ratio (daemon / direct) | API floor | residue | extra CPU |\n| --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
record('daemonIdleRssMiB', idle);
record('daemonBusyRssMiB', busy);
console.log('\n## kruise-daemon memory\n');
console.log(`${limit === undefined ? 'Without a memory limit (no memory cgroup could be made here).' : `In a memory cgroup of its pod's limit (${(limit / 1024 ** 2).toFixed(0)} MiB), as kubelet runs it.`}\n`);
console.log('| state | RSS |\n| --- | --- |');
console.log(`| idle, after start | ${idle.toFixed(1)} MiB |`);
console.log(`| holding 200 tags (all Succeeded) | ${busy.toFixed(1)} MiB |`);
console.log('');
cri.close();
await rest.close();
