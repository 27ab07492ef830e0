// Scale simulation: N simulated nodes, each running the real daemon code (informers, queues,
// status writer) against the real API server, spread over worker processes (scale-worker.ts) so
// that no one event loop bounds them, each with a simulated runtime that answers pulls after a
// delay; the real kruise-manager (the environment's installation) drives the ImagePullJobs. In the
// same run a plain client writes the same number of NodeImage specs and statuses as fast as the
// API server accepts them: the limit the manager's and daemons' times are held against.
//   node dist/test/sim/scale.js ENV_JSON
// SIM_NODES (1000), SIM_JOBS (50), SIM_PARALLELISM (all nodes), SIM_PULL_DELAY_MS (1000),
// SIM_WORKERS (one per 1,000 nodes), SIM_REST_SECONDS (0: how long to watch the cluster at rest),
// SIM_JOBS_MINUTES (0: no limit; how long to wait for the jobs of one phase before reporting how
// far they got), SIM_TITLE (the section's heading).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join } from 'node:path';
import pLimit from 'p-limit';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import type { KubeObject } from '../../api/types/common.js';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { discoverKruise } from '../../kube/kruise.js';
import { rootLogger } from '../../kube/log.js';
import { RestClient } from '../../kube/rest.js';
import { core, PATCH_MERGE, Resource } from '../../kube/resource.js';
import { cpuSeconds, machineCpuMs, openFds, rssMiB } from '../../hack/bench/proc.js';
import { record } from '../../hack/bench/stats.js';
import { auditEntries, auditSize, managerNodeImageWrites, managerSpecWrites, managerWatchGaps, managerWritesInFlight } from '../../hack/bench/audit.js';
import type { FromWorker, ImageTimes, ToWorker } from './scale-worker.js';
import { processAlive, type LocalEnv } from '../../hack/kruise.js';

type SimEnv = Pick<LocalEnv, 'kubeconfig' | 'envDir' | 'auditLog'> & { apiServer: string };

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as SimEnv;
const N = Number(process.env['SIM_NODES'] ?? 1000);
const JOBS = Number(process.env['SIM_JOBS'] ?? 50);
const PAR = Number(process.env['SIM_PARALLELISM'] ?? N);
const DELAY = Number(process.env['SIM_PULL_DELAY_MS'] ?? 1000);
const WORKERS = Math.max(1, Number(process.env['SIM_WORKERS'] ?? Math.ceil(N / 1000)));
const REST_SECONDS = Number(process.env['SIM_REST_SECONDS'] ?? 0);
const JOBS_MINUTES = Number(process.env['SIM_JOBS_MINUTES'] ?? 0);
const TITLE = process.env['SIM_TITLE'] ?? 'Scale simulation';
rootLogger('error');

/** Three quarters of the manager's write slots (WRITES_IN_FLIGHT in manager/imagepulljob/controller.ts): below it, the fan-out runs short of writes. */
const FEW_WRITES = 48;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
// Where a long run is, on stderr (the section goes to stdout).
const say = (what: string): void => {
  process.stderr.write(`[scale ${new Date().toISOString()}] ${what}\n`);
};
const began = Date.now();

const admin = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
// The kinds in the versions the cluster serves (OpenKruise's CRDs, too).
const { api: kruise } = await discoverKruise(admin);
const nis = new Resource<NodeImage & KubeObject>(admin, kruise.nodeImages);
const jobs = new Resource<ImagePullJob & KubeObject>(admin, kruise.imagePullJobs);
const manager = (JSON.parse(readFileSync(join(env.envDir, 'kruise', 'installation.json'), 'utf8')) as { manager: { pid: number; log: string } }).manager;
const managerPid = manager.pid;
// The environment's kube-apiserver, by its pid file: the process is named after its build.
const apiServerPid = ((): number | undefined => {
  try {
    const pid = Number(readFileSync(join(env.envDir, 'kube', 'pids', 'kube-apiserver.pid'), 'utf8').trim());
    return Number.isFinite(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
})();
// A run against another build (hack/build-kube.sh --watch-chan-size) names it: the binary the
// running server was started from, whatever started the environment.
const apiServerBuild = ((): string | undefined => {
  if (apiServerPid === undefined) return undefined;
  try {
    const name = basename(readlinkSync(`/proc/${apiServerPid}/exe`));
    return name === 'kube-apiserver' ? undefined : name;
  } catch {
    return undefined;
  }
})();
const apiServerLog = join(env.envDir, 'kube', 'logs', 'kube-apiserver.log');
const apiLogStart = existsSync(apiServerLog) ? readFileSync(apiServerLog, 'utf8').length : 0;

// Node objects without a kubelet (unschedulable) stand for the nodes: the manager selects nodes,
// not NodeImages. The run's own label and namespace keep runs (and other tests) apart.
const RUN = `sim${Date.now().toString(36)}`;
const NS = `sim-${RUN}`;
const runLabels = { 'kruise-ts.io/sim-run': RUN };
const names = Array.from({ length: N }, (_, i) => `${RUN}-${String(i).padStart(5, '0')}`);
// The limit's objects: NodeImages no daemon and no job reads (fake ones, which live without a Node).
const limitNames = Array.from({ length: N }, (_, i) => `${RUN}-limit-${String(i).padStart(5, '0')}`);
const nodes = new Resource<KubeObject & { spec?: { unschedulable?: boolean } }>(admin, core.nodes);
const namespaces = new Resource<KubeObject>(admin, core.namespaces);
const limit = pLimit(32);
await namespaces.create({ metadata: { name: NS } });
// Every NodeImage create goes through the manager's webhook: one probe first, so a manager that
// cannot answer (once, a manager left from an interrupted run held the webhook's port) is named as
// such rather than failing thousands of creates.
const probe = `${RUN}-probe`;
await nis.create({ metadata: { name: probe, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } } }).catch((err: unknown) => {
  throw new Error(`a NodeImage create is not admitted: is a kruise-manager from an earlier run still holding the webhook's port? (${String(err)})`, { cause: err });
});
await nis.delete(undefined, probe);
await Promise.all(names.map((name) => limit(() => nodes.create({ metadata: { name, labels: runLabels }, spec: { unschedulable: true } }))));
await Promise.all(names.map((name) => limit(() => nis.create({ metadata: { name, labels: runLabels } }))));
await Promise.all(limitNames.map((name) => limit(() => nis.create({ metadata: { name, labels: { 'kruise-ts.io/sim-limit': RUN, [LABEL_FAKE_NODE_IMAGE]: 'true' } } }))));
const objectsSeconds = (Date.now() - began) / 1000;
say(`${N} Nodes and ${2 * N} NodeImages created in ${objectsSeconds.toFixed(1)} s; starting ${WORKERS} worker(s)`);

// The workers, each with its share of the nodes.
interface Worker {
  child: ChildProcess;
  next: (m: FromWorker) => void;
}
const workers: Worker[] = [];
function ask<T extends FromWorker['type']>(w: Worker, msg: ToWorker | undefined, type: T): Promise<Extract<FromWorker, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`simulation worker exited with ${code}`));
    w.child.once('exit', onExit);
    w.next = (m) => {
      if (m.type !== type) return;
      w.child.off('exit', onExit);
      resolve(m as Extract<FromWorker, { type: T }>);
    };
    if (msg) w.child.send(msg);
  });
}
const t0 = Date.now();
for (let i = 0; i < WORKERS; i++) {
  const child = fork(join(import.meta.dirname, 'scale-worker.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const w: Worker = { child, next: () => undefined };
  child.on('message', (m: FromWorker) => w.next(m));
  workers.push(w);
}
const synced = await Promise.all(
  workers.map((w, i) => ask(w, { type: 'start', envKubeconfig: env.kubeconfig, names: names.filter((_, j) => j % WORKERS === i), pullDelayMs: DELAY }, 'synced')),
);
const startupSeconds = (Date.now() - t0) / 1000;
say(`daemons synced in ${startupSeconds.toFixed(1)} s`);
// A daemon opens its watches right after its lists: give the last ones a moment to be counted.
await sleep(2000);

interface Totals {
  requests: Map<string, number>;
  openWatches: number;
  peakOpenWatches: number;
  watchEnds: { timeout: number; early: number; error: number };
  lists: number;
  relistsAfterGone: number;
  refreshWatches: number;
  refreshLists: number;
  rssMiB: number;
  images: Map<string, ImageTimes>;
  holding: number;
}
async function totals(): Promise<Totals> {
  const all = (await Promise.all(workers.map((w) => ask(w, { type: 'stats' }, 'stats')))).map((m) => m.stats);
  const out: Totals = { requests: new Map(), openWatches: 0, peakOpenWatches: 0, watchEnds: { timeout: 0, early: 0, error: 0 }, lists: 0, relistsAfterGone: 0, refreshWatches: 0, refreshLists: 0, rssMiB: 0, images: new Map(), holding: 0 };
  for (const s of all) {
    for (const [k, v] of Object.entries(s.requests)) out.requests.set(k, (out.requests.get(k) ?? 0) + v);
    out.openWatches += s.openWatches;
    out.peakOpenWatches += s.peakOpenWatches;
    out.watchEnds.timeout += s.watchEnds.timeout;
    out.watchEnds.early += s.watchEnds.early;
    out.watchEnds.error += s.watchEnds.error;
    out.lists += s.lists;
    out.relistsAfterGone += s.relistsAfterGone;
    out.refreshWatches += s.refreshWatches;
    out.refreshLists += s.refreshLists;
    out.rssMiB += s.rssMiB;
    out.holding += s.holding;
    for (const [image, t] of Object.entries(s.images)) {
      const cur = out.images.get(image);
      out.images.set(
        image,
        cur
          ? { nodes: cur.nodes + t.nodes, seenFirst: Math.min(cur.seenFirst, t.seenFirst), seenLast: Math.max(cur.seenLast, t.seenLast), done: cur.done + t.done, doneLast: Math.max(cur.doneLast, t.doneLast) }
          : t,
      );
    }
  }
  return out;
}
const count = (t: Totals, pred: (k: string) => boolean): number => [...t.requests].filter(([k]) => pred(k)).reduce((a, [, v]) => a + v, 0);
const statusWrites = (t: Totals): number => count(t, (k) => /^(update|patch) nodeimages\/status$/.test(k));
const watchRequests = (t: Totals): number => count(t, (k) => k.startsWith('watch '));

const atStart = await totals();
const baseRss = synced.reduce((a, m) => a + m.baseRssMiB, 0);
const daemonKiB = ((atStart.rssMiB - baseRss) * 1024) / N;

// The limit: the same number of NodeImage spec and status writes from a plain client, as many at
// once as the manager may have (64 in flight), nothing else to do between them.
async function limitWrites(): Promise<{ specSeconds: number; statusSeconds: number }> {
  const inFlight = pLimit(64);
  const image = 'sim.local/limit';
  const createdAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const owner = { apiVersion: 'bench.kruise-ts.io/v1', kind: 'ScaleLimit', name: 'limit', namespace: NS, uid: `${RUN}-limit` };
  const s0 = Date.now();
  await Promise.all(
    limitNames.map((name) =>
      inFlight(() =>
        nis.patch(undefined, name, { spec: { images: { [image]: { tags: [{ tag: '1.0', version: 0, createdAt, ownerReferences: [owner], pullPolicy: { backoffLimit: 1, timeoutSeconds: 60, ttlSecondsAfterFinished: 86400 } }] } } } }, PATCH_MERGE),
      ),
    ),
  );
  const s1 = Date.now();
  await Promise.all(
    limitNames.map((name) =>
      inFlight(() =>
        nis.patchStatus(undefined, name, { status: { desired: 1, succeeded: 1, imageStatuses: { [image]: { tags: [{ tag: '1.0', version: 0, phase: 'Succeeded', progress: 100, startTime: createdAt, completionTime: createdAt }] } } } }, PATCH_MERGE),
      ),
    ),
  );
  return { specSeconds: (s1 - s0) / 1000, statusSeconds: (Date.now() - s1) / 1000 };
}

interface JobsRun {
  seconds: number;
  /** The manager's NodeImage write that completed placing the tags answered, from the audit log. */
  managerSeconds: number;
  managerWrites: number;
  /** The manager's own NodeImage watch while the jobs ran (audit log). */
  managerWatch: ReturnType<typeof managerWatchGaps>;
  managerInFlight: ReturnType<typeof managerWritesInFlight>;
  fanoutSeconds: number;
  lastStatusSeconds: number;
  /** When the last of the jobs was first seen with a status (its startTime written), and how many had one. */
  firstStatusSeconds: number;
  jobsWithStatus: number;
  writes: number;
  cpu: number;
  peak: Peak;
  apiCpu: number;
  apiPeak: Peak;
  /** CPU seconds of every process on the machine, and of the simulated daemons' workers. */
  machineCpu: number;
  workersCpu: number;
  /** Every job completed, or SIM_JOBS_MINUTES ran out first. */
  complete: boolean;
  /** The jobs' tags by their status, sampled each minute, and at the end. */
  progress: Progress[];
  /** The manager's NodeImage spec writes the API server answered 409; 5xx (a 504 is one it gave up on). */
  managerConflicts: number;
  managerServerErrors: number;
}
interface Progress {
  minutes: number;
  succeeded: number;
  failed: number;
  /** Tags placed: active, succeeded and failed together. */
  placed: number;
}
/** A process's most RSS and open file descriptors (sockets: what thousands of clients cost), sampled every second. */
interface Peak {
  rssMiB: number;
  fds: number;
}
function samplePeak(pid: number | undefined, was: Peak = { rssMiB: 0, fds: 0 }): Peak {
  return pid === undefined ? was : { rssMiB: Math.max(was.rssMiB, rssMiB(pid)), fds: Math.max(was.fds, openFds(pid)) };
}
const higher = (a: Peak, b: Peak): Peak => ({ rssMiB: Math.max(a.rssMiB, b.rssMiB), fds: Math.max(a.fds, b.fds) });
const workersCpuSeconds = (): number => workers.reduce((a, w) => a + (w.child.pid ? cpuSeconds(w.child.pid) : 0), 0);
async function runJobs(n: number, prefix: string): Promise<JobsRun> {
  const before = statusWrites(await totals());
  const cpu0 = cpuSeconds(managerPid);
  const api0 = apiServerPid ? cpuSeconds(apiServerPid) : 0;
  const machine0 = machineCpuMs();
  const workers0 = workersCpuSeconds();
  let peak = samplePeak(managerPid);
  let apiPeak = samplePeak(apiServerPid);
  const auditFrom = auditSize(env.auditLog);
  const start = Date.now();
  const created = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      jobs.create({
        metadata: { name: `${prefix}-${i}`, namespace: NS },
        spec: { image: `sim.local/${prefix}-${i}:1.0`, selector: { matchLabels: runLabels }, parallelism: PAR, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 60, backoffLimit: 1 } },
      }),
    ),
  );
  const jobNames = created.map((j) => j.metadata?.name ?? '');
  const ours = new Set(jobNames);
  const statusSeen = new Map<string, number>();
  const progress: Progress[] = [];
  const deadline = JOBS_MINUTES > 0 ? start + JOBS_MINUTES * 60_000 : Infinity;
  let complete: boolean;
  for (;;) {
    // No kubelet restarts the local manager: what killed it ends the run, in its own words.
    if (!processAlive(managerPid)) {
      const tail = readFileSync(manager.log, 'utf8').split('\n').slice(-40).join('\n');
      throw new Error(`kruise-manager (pid ${managerPid}) exited ${((Date.now() - start) / 1000).toFixed(0)} s into ${n} job(s); the end of its log ${manager.log}:\n${tail}`);
    }
    peak = samplePeak(managerPid, peak);
    apiPeak = samplePeak(apiServerPid, apiPeak);
    // One list a second, not a get per job: the harness's own load stays one request at 50 jobs.
    // An API server that gives up on it (a 504 under load) is asked again, not the run ended.
    const listed = await jobs.list(NS).catch((err: unknown) => say(`cannot list the jobs: ${String(err)}`));
    const over = Date.now() >= deadline;
    complete = false;
    if (listed) {
      const now = listed.items.filter((j) => ours.has(j.metadata?.name ?? ''));
      for (const job of now) if (job.status?.startTime && !statusSeen.has(job.metadata?.name ?? '')) statusSeen.set(job.metadata?.name ?? '', Date.now());
      complete = now.length === jobNames.length && now.every((job) => job.status?.completionTime !== undefined);
      const minutes = Math.floor((Date.now() - start) / 60_000);
      if (complete || over || minutes > (progress.at(-1)?.minutes ?? 0)) {
        const sum = (pick: (st: NonNullable<ImagePullJob['status']>) => number | undefined): number => now.reduce((a, j) => a + (j.status ? (pick(j.status) ?? 0) : 0), 0);
        const succeeded = sum((st) => st.succeeded);
        const failed = sum((st) => st.failed);
        progress.push({ minutes: (Date.now() - start) / 60_000, succeeded, failed, placed: succeeded + failed + sum((st) => st.active) });
        if (n > 1) say(`${n} jobs, ${minutes} min: ${succeeded} of ${n * N} tags succeeded, ${failed} failed`);
      }
    }
    if (complete) break;
    if (over) {
      say(`${n} job(s) not complete after ${JOBS_MINUTES} min (SIM_JOBS_MINUTES): reporting how far they got`);
      break;
    }
    await sleep(1000);
  }
  const seconds = (Date.now() - start) / 1000;
  const cpu = cpuSeconds(managerPid) - cpu0;
  const apiCpu = apiServerPid ? cpuSeconds(apiServerPid) - api0 : 0;
  const machineCpu = (machineCpuMs() - machine0) / 1000;
  const workersCpu = workersCpuSeconds() - workers0;
  const after = await totals();
  const times = jobNames.map((name) => after.images.get(`sim.local/${name}`));
  const fanoutSeconds = Math.max(...times.map((t) => ((t?.seenLast ?? start) - start) / 1000));
  const lastStatusSeconds = Math.max(...times.map((t) => ((t?.doneLast ?? start) - start) / 1000));
  const audited = auditEntries(env.auditLog, auditFrom, '"nodeimages"');
  const nodeSet = new Set(names);
  const written = managerNodeImageWrites(audited, nodeSet, N * n);
  const managerWatch = managerWatchGaps(audited, 'nodeimages');
  const managerInFlight = managerWritesInFlight(audited, nodeSet, written.placedMs, FEW_WRITES);
  const answeredSpecWrites = managerSpecWrites(audited, nodeSet).map((e) => e.responseStatus?.code ?? 0);
  for (const name of jobNames) await jobs.delete(NS, name).catch(() => undefined);
  const firstStatusSeconds = (Math.max(...statusSeen.values()) - start) / 1000;
  return {
    complete,
    progress,
    managerConflicts: answeredSpecWrites.filter((c) => c === 409).length,
    managerServerErrors: answeredSpecWrites.filter((c) => c >= 500).length,
    seconds,
    managerSeconds: (written.placedMs - start) / 1000,
    managerWrites: written.count,
    managerWatch,
    managerInFlight,
    fanoutSeconds,
    lastStatusSeconds,
    firstStatusSeconds,
    jobsWithStatus: statusSeen.size,
    writes: statusWrites(after) - before,
    cpu,
    peak,
    apiCpu,
    apiPeak,
    machineCpu,
    workersCpu,
  };
}

const lim = await limitWrites();
say(`limit: specs ${lim.specSeconds.toFixed(1)} s, statuses ${lim.statusSeconds.toFixed(1)} s`);
await sleep(5000);
const one = await runJobs(1, 'sim-one');
say(`one job: ${one.seconds.toFixed(1)} s`);
await sleep(5000);
const many = await runJobs(JOBS, 'sim-many');
say(`${JOBS} jobs: ${many.seconds.toFixed(1)} s`);

// At rest: no job runs; what the daemons ask of the API server and what the manager holds.
let rest: { seconds: number; watchesPer5MinPerDaemon: number; managerRssMiB: number; managerCpuPercent: number; apiCpuPercent: number } | undefined;
const tagsGone = { seconds: 0, stillHolding: 0 };
if (REST_SECONDS > 0) {
  // The deleted jobs' tags leave every NodeImage first (the manager's spec writes, then the daemons'
  // status writes); those writes end watches too, so the window opens once no daemon holds an image.
  const c0 = Date.now();
  while ((tagsGone.stillHolding = (await totals()).holding) > 0 && Date.now() - c0 < 15 * 60_000) await sleep(5000);
  tagsGone.seconds = (Date.now() - c0) / 1000;
  say(`the deleted jobs' images left NodeImages in ${tagsGone.seconds.toFixed(1)} s (${tagsGone.stillHolding} still hold one)`);
  await sleep(10_000);
  const r0 = await totals();
  const cpu0 = cpuSeconds(managerPid);
  const api0 = apiServerPid ? cpuSeconds(apiServerPid) : 0;
  const s0 = Date.now();
  say(`at rest for ${REST_SECONDS} s`);
  await sleep(REST_SECONDS * 1000);
  const r1 = await totals();
  const seconds = (Date.now() - s0) / 1000;
  rest = {
    seconds,
    watchesPer5MinPerDaemon: (watchRequests(r1) - watchRequests(r0)) / N / (seconds / 300),
    managerRssMiB: rssMiB(managerPid),
    managerCpuPercent: (100 * (cpuSeconds(managerPid) - cpu0)) / seconds,
    apiCpuPercent: apiServerPid ? (100 * (cpuSeconds(apiServerPid) - api0)) / seconds : 0,
  };
}
const end = await totals();
const apiLog = existsSync(apiServerLog) ? readFileSync(apiServerLog, 'utf8').slice(apiLogStart) : '';
const closedUnresponsive = (apiLog.match(/Forcing watcher close due to unresponsiveness/g) ?? []).length;
const tooOld = (apiLog.match(/too old resource version/g) ?? []).length;

for (const w of workers) await ask(w, { type: 'stop' }, 'stopped').catch(() => undefined);
const cleanup = pLimit(32);
await Promise.all([...names, ...limitNames].map((name) => cleanup(() => nis.delete(undefined, name).catch(() => undefined))));
await Promise.all(names.map((name) => cleanup(() => nodes.delete(undefined, name).catch(() => undefined))));
await namespaces.delete(undefined, NS).catch(() => undefined);
await admin.close();

const runSeconds = one.seconds + many.seconds;
// CPU seconds during the jobs: the whole machine (everything here shares its cores: API server,
// etcd, manager, the simulated daemons) and each part of it measured on its own.
const machineCpu = one.machineCpu + many.machineCpu;
const apiCpu = one.apiCpu + many.apiCpu;
const workersCpu = one.workersCpu + many.workersCpu;
const managerCpu = one.cpu + many.cpu;
const percentOfRun = (cpu: number): number => (100 * cpu) / runSeconds;
const managerCpuPercent = percentOfRun(managerCpu);
const managerPeak = higher(one.peak, many.peak);
const apiServerPeak = higher(one.apiPeak, many.apiPeak);
const fanoutRatio = one.managerSeconds / lim.specSeconds;
// A node's status write follows its tag by the pull's delay; the daemons' writes overlap the
// fan-out, so the two are held against the limit's two write phases together.
const endToEndRatio = (one.lastStatusSeconds - DELAY / 1000) / (lim.specSeconds + lim.statusSeconds);
const watchesPerDaemon = atStart.openWatches / N;
// Lists after start-up are either re-lists after a 410 or lists renewing an ageing version.
const listsAfterStartup = end.lists - atStart.lists;
const goneAfterStartup = end.relistsAfterGone - atStart.relistsAfterGone;
const renewalsAfterStartup = end.refreshLists - atStart.refreshLists;

record('simNodes', N);
record('simJobs', JOBS);
record('simWatchesPerDaemon', end.peakOpenWatches / N);
record('simWritesPerNodePerTag', Math.max(one.writes / N, many.writes / (N * JOBS)));
record('simManagerPeakRssMiB', managerPeak.rssMiB);
record('simManagerCpuPercent', managerCpuPercent);
record('simOneJobSeconds', one.seconds);
record('simFanoutRatio', fanoutRatio);
record('simManagerWritesPerNode', one.managerWrites / N);
record('simEndToEndRatio', endToEndRatio);
record('simMachineCpuPercent', percentOfRun(machineCpu));

const f = (x: number, d = 1): string => x.toFixed(d);
const watchFigures = (w: JobsRun['managerWatch']): string =>
  `${w.requests}, ${f(w.longestGapMs / 1000)} s, ${w.lists} lists${w.lists > 0 ? ` (${f(w.longestListMs / 1000)} s)` : ''}`;
console.log(`## ${TITLE}: ${N} simulated nodes\n`);
console.log(
  `Each simulated node runs the real daemon code (NodeImage and CRR informers, queues, status writer) against the real API server, spread over ${WORKERS} worker process(es), with a simulated runtime answering pulls after ${DELAY} ms; the real kruise-manager drives the jobs. In the same run a plain client writes ${N} NodeImage specs and ${N} statuses (merge patches, 64 in flight) as fast as the API server accepts them: the limit. All on this one machine with its API server${apiServerBuild !== undefined ? ` (${apiServerBuild})` : ''} and etcd.\n`,
);
console.log('| measurement | value | target |\n| --- | --- | --- |');
console.log(`| set-up: ${N} Nodes and ${2 * N} NodeImages created; the daemons started and synced | ${f(objectsSeconds)} s; ${f(startupSeconds)} s | |`);
console.log(`| limit: ${N} NodeImage spec writes; ${N} status writes | ${f(lim.specSeconds)} s (${f(N / lim.specSeconds, 0)}/s); ${f(lim.statusSeconds)} s (${f(N / lim.statusSeconds, 0)}/s) | |`);
console.log(
  `| one ImagePullJob over all nodes (parallelism ${PAR}): the manager's NodeImage writes answered / every daemon has seen its tag / last status seen / job complete | ${f(one.managerSeconds)} s / ${f(one.fanoutSeconds)} s / ${f(one.lastStatusSeconds)} s / ${f(one.seconds)} s | |`,
);
console.log(`| manager fan-out (its writes placing the tag answered, by the API server's audit log; ${f(one.managerWrites / N, 2)} writes per node) ÷ the limit's spec writes | ${f(fanoutRatio, 2)} | ≤ 1.2 |`);
console.log(
  `| the manager's NodeImage writes in flight during the one job's fan-out (audit log): time with none; with fewer than ${FEW_WRITES} (of its 64 write slots) | ${f(one.managerInFlight.noneMs / 1000)} s; ${f(one.managerInFlight.fewerMs / 1000)} s | |`,
);
console.log(`| (last status − pull delay) ÷ the limit's spec + status writes | ${f(endToEndRatio, 2)} | ≤ 1.2 |`);
if (many.complete) {
  console.log(
    `| ${JOBS} ImagePullJobs at once over all nodes: the last job's first status (startTime) seen / the manager's writes placing the tags answered (${f(many.managerWrites / N, 2)} writes per node) / every daemon has seen its tags / job complete | ${f(many.firstStatusSeconds)} s / ${f(many.managerSeconds)} s / ${f(many.fanoutSeconds)} s / ${f(many.seconds)} s | |`,
  );
} else {
  const last = many.progress.at(-1);
  console.log(
    `| ${JOBS} ImagePullJobs at once over all nodes: **not complete after ${JOBS_MINUTES} min** (SIM_JOBS_MINUTES); jobs with a status; tags succeeded / failed / placed of ${JOBS * N}, by the jobs' status; the manager's NodeImage writes answered | ${many.jobsWithStatus} of ${JOBS}; ${last?.succeeded ?? 0} / ${last?.failed ?? 0} / ${last?.placed ?? 0}; ${many.managerWrites} (${f(many.managerWrites / N, 2)} per node) | |`,
  );
}
if (JOBS > 1) {
  // Every 5 minutes and the last sample: how the jobs went, and whether they stopped going.
  const marks = many.progress.filter((p, i, all) => i === all.length - 1 || Math.round(p.minutes) % 5 === 0);
  console.log(
    `| the ${JOBS} jobs' tags succeeded (placed) by their status, by minutes into them | ${marks.map((p) => `${f(p.minutes, 0)} min: ${p.succeeded} (${p.placed})`).join('; ')} | |`,
  );
}
console.log(`| the manager's NodeImage spec writes answered 409 Conflict / 5xx (a 504: the API server gave up on it) | one job: ${one.managerConflicts} / ${one.managerServerErrors}; ${JOBS} jobs: ${many.managerConflicts} / ${many.managerServerErrors} | |`);
console.log(
  `| the manager's NodeImage watch while the jobs ran (audit log; one job, ${JOBS} jobs): watch requests; longest time with none open (from a watch's end to the next request); its lists (re-lists after a 410), the longest | ${watchFigures(one.managerWatch)}; ${watchFigures(many.managerWatch)} | |`,
);
console.log(`| watches held open per daemon, after start-up / at most | ${f(watchesPerDaemon, 2)} / ${f(end.peakOpenWatches / N, 2)} | ≤ 2 |`);
console.log(`| watches ended by the server at their timeout / early / failed (all daemons, whole run); of them short ones asked for a bookmark's newer version | ${end.watchEnds.timeout} / ${end.watchEnds.early} / ${end.watchEnds.error}; ${end.refreshWatches} | |`);
console.log(
  `| lists after start-up (all daemons); of them re-lists after a 410; lists renewing an ageing version after an early end (from the watch cache: one NodeImage, or the node's CRRs) | ${listsAfterStartup}; ${goneAfterStartup}; ${renewalsAfterStartup} | re-lists after a 410: 0 |`,
);
console.log(`| API server log: watchers closed as unresponsive; "too old resource version" | ${closedUnresponsive}; ${tooOld} | |`);
if (rest) {
  console.log(`| the deleted jobs' images gone from every NodeImage (spec and status), after the jobs were deleted; NodeImages still holding one when the wait gave up (15 min) | ${f(tagsGone.seconds)} s; ${tagsGone.stillHolding} | |`);
  console.log(`| at rest (${f(rest.seconds / 60)} min, from 10 s after that): watch requests per daemon per 5 min | ${f(rest.watchesPer5MinPerDaemon, 2)} | ≤ 1 |`);
  console.log(`| at rest: manager RSS; manager CPU; API server CPU | ${f(rest.managerRssMiB, 0)} MiB; ${f(rest.managerCpuPercent)}% of a core; ${f(rest.apiCpuPercent)}% | |`);
}
console.log(`| NodeImage status writes per node per tag (one job; ${JOBS} jobs) | ${f(one.writes / N, 2)}; ${f(many.writes / (N * JOBS), 2)} | ≤ 3 |`);
console.log(`| manager CPU during the jobs; peak RSS; open file descriptors at most | ${f(managerCpuPercent, 0)}% of a core; ${f(managerPeak.rssMiB, 0)} MiB; ${managerPeak.fds} | < 500 MiB |`);
console.log(`| API server CPU during the jobs; peak RSS; open file descriptors at most | ${f(percentOfRun(apiCpu), 0)}% of a core; ${f(apiServerPeak.rssMiB, 0)} MiB; ${apiServerPeak.fds} | |`);
const share = (cpu: number): string => `${f(percentOfRun(cpu), 0)}%`;
console.log(
  `| CPU during the jobs, in % of a core (the machine has ${cpus().length}): every process; the API server; the simulated daemons; the manager; the rest (etcd, this benchmark, the system) | ${share(machineCpu)}; ${share(apiCpu)}; ${share(workersCpu)}; ${share(managerCpu)}; ${share(machineCpu - apiCpu - workersCpu - managerCpu)} | |`,
);
console.log(`| memory per simulated daemon (in ${WORKERS} worker process(es)) | ${f(daemonKiB, 0)} KiB | |`);
console.log(
  `\nDaemon API requests per node, by verb and resource (a watch the server ends is one more watch request; after an early end with a version 5 s old or older, one more list before it): ${[...end.requests].map(([k, v]) => `${k} ${f(v / N, 2)}`).join(', ')}\n`,
);
