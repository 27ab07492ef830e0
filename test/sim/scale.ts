// Scale simulation: N simulated nodes, each running the real daemon code (informers, queues,
// status writer) against the real API server, with a simulated runtime that answers pulls after a
// delay; the real kruise-manager (the environment's installation) drives ImagePullJobs over them.
//   node dist/test/sim/scale.js ENV_JSON      (SIM_NODES, SIM_JOBS, SIM_PARALLELISM, SIM_PULL_DELAY_MS)
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { CriClient } from '../../daemon/cri/client.js';
import { Daemon } from '../../daemon/daemon.js';
import { DaemonMetrics } from '../../daemon/metrics.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { rootLogger } from '../../kube/log.js';
import { RestClient, type Query, type WatchEvent } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { cpuSeconds, rssMiB } from '../../hack/bench/proc.js';
import { record } from '../../hack/bench/stats.js';
import { FakeRuntime } from './fake-runtime.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE } from '../../api/installation.js';
import { discoverKruise } from '../../kube/kruise.js';

interface SimEnv {
  kubeconfig: string;
  envDir: string;
}

export interface ScaleResult {
  nodes: number;
  jobs: number;
  parallelism: number;
  pullDelayMs: number;
  oneJobSeconds: number;
  manyJobsSeconds: number;
  watchesPerDaemon: number;
  peakWatchesPerDaemon: number;
  requestsPerNode: Record<string, number>;
  statusWritesPerNodePerTagOneJob: number;
  statusWritesPerNodePerTagManyJobs: number;
  writeRatePerSecond: number;
  managerCpuPercent: number;
  managerPeakRssMiB: number;
  daemonRssMiB: number;
  setupSeconds: number;
}

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as SimEnv;
const N = Number(process.env['SIM_NODES'] ?? 1000);
const JOBS = Number(process.env['SIM_JOBS'] ?? 50);
const PAR = Number(process.env['SIM_PARALLELISM'] ?? 500);
const DELAY = Number(process.env['SIM_PULL_DELAY_MS'] ?? 1000);
rootLogger('error');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const admin = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
// The kinds in the versions the cluster serves (OpenKruise's CRDs, too).
const { api: kruise } = await discoverKruise(admin);
const nis = new Resource<NodeImage & KubeObject>(admin, kruise.nodeImages);
const jobs = new Resource<ImagePullJob & KubeObject>(admin, kruise.imagePullJobs);
const managerPid = (JSON.parse(readFileSync(join(env.envDir, 'kruise', 'installation.json'), 'utf8')) as { manager: { pid: number } }).manager.pid;

// Every simulated daemon's API traffic, by verb and resource.
const counts = new Map<string, number>();
/** Counts the watches the simulated daemons hold open (a request count would also count resumptions). */
class WatchCountingRestClient extends RestClient {
  openWatches = 0;
  peakOpen = 0;

  override async watch<T>(path: string, query: Query, onEvent: (ev: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    this.openWatches++;
    this.peakOpen = Math.max(this.peakOpen, this.openWatches);
    try {
      await super.watch(path, query, onEvent, signal);
    } finally {
      this.openWatches--;
    }
  }
}
const daemonRest = new WatchCountingRestClient(loadClusterAccess(env.kubeconfig), {
  qps: 0,
  observe: (verb, resource) => counts.set(`${verb} ${resource}`, (counts.get(`${verb} ${resource}`) ?? 0) + 1),
});
const count = (pred: (k: string) => boolean): number => [...counts].filter(([k]) => pred(k)).reduce((a, [, v]) => a + v, 0);

// Node objects without a kubelet (unschedulable) stand for the nodes: the manager selects nodes,
// not NodeImages. The run's own label and namespace keep runs (and other tests) apart.
const RUN = `sim${Date.now().toString(36)}`;
const NS = `sim-${RUN}`;
const runLabels = { 'kruise-ts.io/sim-run': RUN };
const names = Array.from({ length: N }, (_, i) => `${RUN}-${String(i).padStart(5, '0')}`);
const nodes = new Resource<KubeObject & { spec?: { unschedulable?: boolean } }>(admin, core.nodes);
const namespaces = new Resource<KubeObject>(admin, core.namespaces);
const limit = pLimit(32);
const t0 = Date.now();
await namespaces.create({ metadata: { name: NS } });
await Promise.all(names.map((name) => limit(() => nodes.create({ metadata: { name, labels: runLabels }, spec: { unschedulable: true } }))));
await Promise.all(names.map((name) => limit(() => nis.create({ metadata: { name, labels: runLabels } }))));

const runtime = await FakeRuntime.start({ socket: join(tmpdir(), `kruise-ts-sim-${process.pid}.sock`), pullDelayMs: DELAY });
const cri = new CriClient(join(tmpdir(), `kruise-ts-sim-${process.pid}.sock`));
const metrics = new DaemonMetrics();
const baseRss = rssMiB('self');
const daemons = names.map(
  (node) =>
    new Daemon({ node, rest: daemonRest, kruise, cri, secretNamespace: DEFAULT_DAEMON_CONFIG_NAMESPACE, maxWorkers: 5, imageFsHighWatermark: 100, hostRoot: '/', statusIntervalMs: 5000, metrics, progress: false }),
);
for (const d of daemons) d.start();
while (!daemons.every((d) => d.synced())) await sleep(200);
const setupSeconds = (Date.now() - t0) / 1000;
// A daemon opens its watches right after its lists: give the last ones a moment to be counted.
await sleep(2000);
const daemonRssMiB = (rssMiB('self') - baseRss) / N;
const watchesPerDaemon = daemonRest.openWatches / N;

async function runJobs(n: number, prefix: string): Promise<{ seconds: number; writes: number; cpu: number; peak: number }> {
  const before = count((k) => /^(update|patch) nodeimages\/status$/.test(k));
  const cpu0 = cpuSeconds(managerPid);
  let peak = rssMiB(managerPid);
  const start = Date.now();
  const created = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      jobs.create({
        metadata: { name: `${prefix}-${i}`, namespace: NS },
        spec: { image: `sim.local/${prefix}-${i}:1.0`, selector: { matchLabels: runLabels }, parallelism: PAR, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 } },
      }),
    ),
  );
  for (;;) {
    peak = Math.max(peak, rssMiB(managerPid));
    const done = await Promise.all(created.map(async (j) => (await jobs.get(NS, j.metadata?.name ?? '')).status?.completionTime !== undefined));
    if (done.every(Boolean)) break;
    await sleep(1000);
  }
  const seconds = (Date.now() - start) / 1000;
  const cpu = cpuSeconds(managerPid) - cpu0;
  for (const j of created) await jobs.delete(NS, j.metadata?.name ?? '').catch(() => undefined);
  return { seconds, writes: count((k) => /^(update|patch) nodeimages\/status$/.test(k)) - before, cpu, peak };
}

const one = await runJobs(1, 'sim-one');
await sleep(5000);
const many = await runJobs(JOBS, 'sim-many');

const result: ScaleResult = {
  nodes: N,
  jobs: JOBS,
  parallelism: PAR,
  pullDelayMs: DELAY,
  oneJobSeconds: one.seconds,
  manyJobsSeconds: many.seconds,
  watchesPerDaemon,
  peakWatchesPerDaemon: daemonRest.peakOpen / N,
  requestsPerNode: Object.fromEntries([...counts].map(([k, v]) => [k, Number((v / N).toFixed(2))])),
  statusWritesPerNodePerTagOneJob: one.writes / N,
  statusWritesPerNodePerTagManyJobs: many.writes / (N * JOBS),
  writeRatePerSecond: many.writes / many.seconds,
  managerCpuPercent: (100 * (one.cpu + many.cpu)) / (one.seconds + many.seconds),
  managerPeakRssMiB: Math.max(one.peak, many.peak),
  daemonRssMiB,
  setupSeconds,
};

for (const d of daemons) await d.stop();
cri.close();
await runtime.stop();
await Promise.all(names.map((name) => limit(() => nis.delete(undefined, name).catch(() => undefined))));
await Promise.all(names.map((name) => limit(() => nodes.delete(undefined, name).catch(() => undefined))));
await namespaces.delete(undefined, NS).catch(() => undefined);
await daemonRest.close();
await admin.close();

record('simNodes', N);
record('simJobs', JOBS);
record('simWatchesPerDaemon', result.peakWatchesPerDaemon);
record('simWritesPerNodePerTag', Math.max(result.statusWritesPerNodePerTagOneJob, result.statusWritesPerNodePerTagManyJobs));
record('simManagerPeakRssMiB', result.managerPeakRssMiB);
record('simManagerCpuPercent', result.managerCpuPercent);
record('simOneJobSeconds', result.oneJobSeconds);
console.log(`## Scale simulation: ${N} simulated nodes\n`);
console.log(`Each simulated node runs the real daemon code (NodeImage and CRR informers, queues, status writer) in one process against the real API server, with a simulated runtime answering pulls after ${DELAY} ms; the real kruise-manager drives the jobs. ${N} nodes (SIM_NODES), all on this one machine with its API server.\n`);
console.log('| measurement | value | target |\n| --- | --- | --- |');
console.log(`| one ImagePullJob over all nodes, parallelism ${PAR}: time to completion | ${result.oneJobSeconds.toFixed(1)} s | |`);
console.log(`| ${JOBS} ImagePullJobs at once over all nodes: time to completion | ${result.manyJobsSeconds.toFixed(1)} s | |`);
console.log(`| watches held open per daemon, 2 s after start-up / at most during the runs | ${result.watchesPerDaemon.toFixed(2)} / ${result.peakWatchesPerDaemon.toFixed(2)} | ≤ 2 |`);
console.log(`| NodeImage status writes per node per tag (one job) | ${result.statusWritesPerNodePerTagOneJob.toFixed(2)} | ≤ 3 |`);
console.log(`| NodeImage status writes per node per tag (${JOBS} jobs) | ${result.statusWritesPerNodePerTagManyJobs.toFixed(2)} | ≤ 3 |`);
console.log(`| status write rate during the ${JOBS} jobs | ${result.writeRatePerSecond.toFixed(0)} /s | |`);
console.log(`| manager CPU during the runs | ${result.managerCpuPercent.toFixed(0)}% of a core | |`);
console.log(`| manager peak RSS | ${result.managerPeakRssMiB.toFixed(0)} MiB | < 500 MiB |`);
console.log(`| memory per simulated daemon (in one process) | ${(result.daemonRssMiB * 1024).toFixed(0)} KiB | |`);
console.log(`\nDaemon API requests per node, by verb and resource (a watch the server ends is resumed from its last resourceVersion, one more watch request): ${Object.entries(result.requestsPerNode).map(([k, v]) => `${k} ${v}`).join(', ')}\n`);
