// Manager scale benchmark on the real API server of the local cluster: a kruise-manager process
// (webhook and controllers, from the build) against thousands of Node objects without kubelet and
// their NodeImages, with a simulated daemon answering tags through the status subresource.
//   (a) one ImagePullJob over N nodes at parallelism N: time until every NodeImage carries the tag,
//       manager writes per node, time to completion;
//   (b) J Never jobs over M nodes once every node has answered: reconciles, writes and CPU with
//       nothing changing, then after one tag on one node changes.
//   node dist/hack/bench/manager-scale.js ENV_JSON
// BENCH_NODES (5000), BENCH_JOBS (200), BENCH_JOB_NODES (1000) scale it down for a quick look;
// BENCH_KEEP_OBJECTS=1 leaves the thousands of objects to the environment's teardown.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ImageSpec, ImageStatus, NodeImage } from '../../api/types/nodeimage.js';
import { Informer } from '../../kube/informer.js';
import { kruise } from '../../kube/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { ApiError, RestClient } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';
import { cpuSeconds, peakRssMiB, rssMiB } from './proc.js';
import { summarizeHeap } from './heap-summary.js';
import { record } from './stats.js';
import { auditEntries, auditSize, managerNodeImageWrites } from './audit.js';
import { jobTarget, tagPullPolicy } from '../../manager/imagepulljob/target.js';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../api/installation.js';
import { install, managerArgs, portOffset, processAlive, startManager, stopPid, type LocalEnv } from '../kruise.js';
import { cgroupName, liftPodMemoryLimit, podMemoryLimitOf, removePodMemoryCgroup } from '../pod-memory.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE, DEFAULT_KRUISE_NAMESPACE } from '../../api/installation.js';

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as LocalEnv;
const N = Number(process.env['BENCH_NODES'] ?? 5000);
const J = Number(process.env['BENCH_JOBS'] ?? 200);
const M = Math.min(N, Number(process.env['BENCH_JOB_NODES'] ?? 1000));
const REPOS = Math.max(1, Math.round(J / 10));
const WINDOW_MS = 15_000;
const RUN = `kb${Date.now().toString(36)}`;
const NS = `bench-${RUN}`;
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const nodes = new Resource<KubeObject & { spec?: { unschedulable?: boolean } }>(rest, core.nodes);
const nis = new Resource<NodeImage>(rest, kruise.nodeImages);
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
// Ctrl-C or SIGTERM ends the waits, so the cleanup in main's finally still runs.
const interrupted = new AbortController();
process.once('SIGINT', () => interrupted.abort());
process.once('SIGTERM', () => interrupted.abort());
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const log = (msg: string): void => void process.stderr.write(`[manager-scale] ${msg}\n`);
const offset = portOffset(env);
const ports = { metrics: 18082 + offset, health: 18002 + offset };
const nodeName = (i: number): string => `${RUN}-${String(i).padStart(5, '0')}`;
const labelsOf = (i: number): Record<string, string> => ({ 'kruise-bench/run': RUN, 'kruise-bench/group': i < M ? 'b' : 'rest' });

/** The manager's metrics: {name{labels}: value}. */
async function scrape(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
function total(m: Map<string, number>, metric: string, ...must: string[]): number {
  let t = 0;
  for (const [k, v] of m) if (k.startsWith(`${metric}{`) && must.every((x) => k.includes(x))) t += v;
  return t;
}
const writeVerbs = ['create', 'update', 'patch', 'delete'];
function writes(m: Map<string, number>, resource?: string): number {
  return writeVerbs.reduce((a, verb) => a + total(m, 'kruise_manager_api_requests_total', `verb="${verb}"`, ...(resource ? [`resource="${resource}"`] : [])), 0);
}
const reconciles = (m: Map<string, number>, controller?: string): number =>
  total(m, 'kruise_manager_reconciles_total', ...(controller ? [`controller="${controller}"`] : []));


/** Runs make(0..n-1), a few at once; a call the server failed to answer is tried again. */
async function createAll(n: number, make: (i: number) => Promise<unknown>, concurrency = 24): Promise<void> {
  const limit = pLimit(concurrency);
  const attempt = async (i: number): Promise<void> => {
    for (let a = 1; ; a++) {
      try {
        await make(i);
        return;
      } catch (err) {
        if (!(err instanceof ApiError && err.transient) || a >= 5) throw err;
        await sleep(200 * a);
      }
    }
  };
  await Promise.all(Array.from({ length: n }, (_, i) => limit(() => attempt(i))));
}

/** Waits for `done` on the events of an informer, never polling the server. */
function until<T extends KubeObject>(inf: Informer<T>, done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not done after ${timeoutMs} ms`)), timeoutMs);
    interrupted.signal.addEventListener('abort', () => reject(new Error(`${what}: interrupted`)), { once: true });
    const check = (): void => {
      if (!done()) return;
      clearTimeout(timer);
      resolve();
    };
    inf.on({ add: check, update: check, delete: check });
    check();
  });
}

/**
 * The simulated daemons: one watch over the run's NodeImages; every tag without a status for its
 * version gets Succeeded, in one status write per NodeImage, like the real daemon's coalesced writes.
 */
function simulateDaemons(inf: Informer<NodeImage>): { written: () => number; answer: (fresh: NodeImage) => NodeImage | undefined } {
  const limit = pLimit(16);
  const queued = new Set<string>();
  let written = 0;
  const unanswered = (ni: NodeImage): boolean =>
    Object.entries(ni.spec?.images ?? {}).some(([image, spec]) =>
      spec.tags.some((t) => !ni.status?.imageStatuses?.[image]?.tags.some((s) => s.tag === t.tag && (s.version ?? 0) === (t.version ?? 0))),
    );
  const answer = (fresh: NodeImage): NodeImage | undefined => {
    if (!unanswered(fresh)) return undefined;
    const images: Record<string, ImageStatus> = {};
    let desired = 0;
    for (const [image, spec] of Object.entries(fresh.spec?.images ?? {})) {
      images[image] = { tags: spec.tags.map((t) => ({ tag: t.tag, phase: 'Succeeded' as const, version: t.version ?? 0, progress: 100, startTime: now(), completionTime: now() })) };
      desired += spec.tags.length;
    }
    return { ...fresh, status: { desired, succeeded: desired, failed: 0, pulling: 0, waiting: 0, imageStatuses: images } };
  };
  const onEvent = (ni: NodeImage): void => {
    const name = ni.metadata?.name ?? '';
    if (queued.has(name) || !unanswered(ni)) return;
    queued.add(name);
    void limit(async () => {
      queued.delete(name);
      const cur = inf.get(name);
      if (!cur) return;
      await updateWithRetry(nis, undefined, name, answer, { status: true, initial: cur, attempts: 20 }).catch((err: unknown) => log(`status write ${name}: ${(err as Error).message}`));
      written++;
    });
  };
  inf.on({ add: onEvent, update: (_a, b) => onEvent(b) });
  return { written: () => written, answer };
}

async function deleteWebhooks(): Promise<void> {
  for (const [plural, name] of [['mutatingwebhookconfigurations', MUTATING_WEBHOOK_CONFIGURATION], ['validatingwebhookconfigurations', VALIDATING_WEBHOOK_CONFIGURATION]] as const) {
    await rest.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${plural}/${name}`).catch(() => undefined);
  }
}

const mib = (bytes: number | undefined): string => `${((bytes ?? 0) / 1048576).toFixed(0)} MiB`;

/** Where the manager's RSS sits, by prom-client's Node.js metrics: the V8 heap and what lives outside it. */
function memoryParts(m: Map<string, number>): string {
  return (
    `${mib(m.get('nodejs_heap_size_total_bytes'))} (${mib(m.get('nodejs_heap_size_used_bytes'))}); ` +
    `${mib(m.get('nodejs_heap_space_size_total_bytes{space="old"}'))}; ${mib(m.get('nodejs_external_memory_bytes'))}`
  );
}

/** Has the manager write a heap snapshot and sums it up; undefined when none came within 10 minutes (a heap of 5,000 nodes' NodeImages takes minutes). */
async function heapSnapshot(pid: number, dir: string): Promise<ReturnType<typeof summarizeHeap> | undefined> {
  // Writing it takes several times the heap: in the pod's limit the kernel would kill the manager
  // for the snapshot alone (measured: 200 jobs over 1,000 nodes; 50 over 5,000 with 1 GiB more).
  liftPodMemoryLimit(pid);
  process.kill(pid, 'SIGUSR2');
  let last = -1;
  for (let i = 0; i < 1200 && !interrupted.signal.aborted; i++) {
    await sleep(500);
    if (!processAlive(pid)) {
      log('the manager exited while writing its heap snapshot');
      return undefined;
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
    if (file === undefined) continue;
    // Written by the manager's main thread: complete once it answers again and the size holds.
    const size = statSync(join(dir, file)).size;
    const answers = await fetch(`http://127.0.0.1:${ports.health}/healthz`).then((r) => r.ok, () => false);
    if (answers && size === last) {
      const summary = summarizeHeap(join(dir, file));
      rmSync(dir, { recursive: true, force: true });
      return summary;
    }
    last = size;
  }
  log('no heap snapshot');
  return undefined;
}

async function main(): Promise<void> {
  const start = Date.now();
  await new Resource<KubeObject>(rest, core.namespaces).create({ metadata: { name: NS } });
  for (const name of [DEFAULT_KRUISE_NAMESPACE, DEFAULT_DAEMON_CONFIG_NAMESPACE]) {
    await new Resource<KubeObject>(rest, core.namespaces).create({ metadata: { name } }).catch((e: unknown) => {
      if (!(e instanceof ApiError && e.alreadyExists)) throw e;
    });
  }
  // The manager runs under its ServiceAccount, with what an installation provides (RBAC, the
  // webhook Secret it fills in).
  await install(env);
  const mlog = join(env.envDir, `manager-scale-${RUN}.log`);
  const extra = ['--metrics-addr', `127.0.0.1:${ports.metrics}`, '--health-probe-addr', `127.0.0.1:${ports.health}`, '--rest-config-qps', '1000', '--rest-config-burst', '2000', '--log-level', 'warn'];
  // A heap snapshot at the end shows where the manager's memory goes (SIGUSR2, into the env's dir).
  const snapDir = join(env.envDir, `manager-scale-${RUN}-heap`);
  mkdirSync(snapDir, { recursive: true });
  const pid = await startManager(['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`, ...managerArgs(env, extra)], mlog, ports.health);
  log(`manager pid ${pid}, log ${mlog}`);
  const rows: string[][] = [];
  const ac = new AbortController();
  try {
    // Nodes first: a NodeImage whose Node does not exist yet would be deleted by the controller.
    let t0 = Date.now();
    await createAll(N, (i) => nodes.create({ metadata: { name: nodeName(i), labels: labelsOf(i) }, spec: { unschedulable: true } }));
    await createAll(N, (i) => nis.create({ metadata: { name: nodeName(i), labels: labelsOf(i) }, spec: {} }));
    log(`created ${N} nodes and NodeImages in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    const inf = new Informer<NodeImage>(nis, { labelSelector: `kruise-bench/run=${RUN}` });
    void inf.run(ac.signal);
    await inf.synced;
    const sim = simulateDaemons(inf);
    const jobInf = new Informer<ImagePullJob>(jobs, { namespace: NS });
    void jobInf.run(ac.signal);
    await jobInf.synced;
    await sleep(5000);

    // (a) one job, every node at once.
    const imageA = 'bench.local/scale-a';
    const before = await scrape();
    const cpu0 = cpuSeconds(pid);
    const auditFrom = auditSize(env.auditLog);
    t0 = Date.now();
    await jobs.create({ metadata: { name: 'scale-a', namespace: NS }, spec: { image: `${imageA}:1.0`, parallelism: N, completionPolicy: { type: 'Always' }, selector: { matchLabels: { 'kruise-bench/run': RUN } } } });
    const carries = (): number => inf.list().filter((ni) => ni.spec?.images?.[imageA]).length;
    await until(inf, () => carries() === N, 1_800_000, 'tags');
    const seen = Date.now() - t0;
    await until(jobInf, () => jobInf.get(`${NS}/scale-a`)?.status?.completionTime !== undefined, 1_800_000, 'job a');
    const completed = Date.now() - t0;
    await sleep(2000);
    const after = await scrape();
    const cpuA = cpuSeconds(pid) - cpu0;
    const niWrites = writes(after, 'nodeimages') - writes(before, 'nodeimages');
    const placed = managerNodeImageWrites(auditEntries(env.auditLog, auditFrom, '"nodeimages"'), new Set(Array.from({ length: N }, (_, i) => nodeName(i))), N);
    const tagged = placed.placedMs - t0;
    const answered = (code: number): number =>
      total(after, 'kruise_manager_api_requests_total', 'resource="nodeimages"', `code="${code}"`) - total(before, 'kruise_manager_api_requests_total', 'resource="nodeimages"', `code="${code}"`);
    // A guarded spec patch whose object moved is answered 422, a PUT with a stale resourceVersion 409.
    const conflicts = answered(409) + answered(422);
    record('managerOneJobNodes', N);
    record('managerOneJobTaggedSeconds', tagged / 1000);
    record('managerOneJobCpuPercent', (100 * cpuA) / (completed / 1000));
    rows.push(['(a) the manager\'s writes placing the tag on every NodeImage answered (the API server\'s audit log)', `${(tagged / 1000).toFixed(1)} s`]);
    rows.push(['(a) the benchmark\'s own watch has seen every tag', `${(seen / 1000).toFixed(1)} s`]);
    rows.push(['(a) job completed (simulated daemons answer at once)', `${(completed / 1000).toFixed(1)} s`]);
    rows.push(['(a) manager NodeImage writes per node', `${(niWrites / N).toFixed(3)} (${niWrites} writes, ${conflicts} conflicts)`]);
    const failedA = jobInf.get(`${NS}/scale-a`)?.status?.failed ?? 0;
    rows.push(['(a) nodes failed', String(failedA)]);
    rows.push(['(a) manager CPU while it ran', `${cpuA.toFixed(1)} s (${((100 * cpuA) / (completed / 1000)).toFixed(0)}% of a core)`]);
    log(`(a) done: tags placed ${tagged} ms, seen ${seen} ms, completed ${completed} ms, ${niWrites} NodeImage writes, simulated status writes ${sim.written()}`);

    // (b) J Never jobs over M nodes, REPOS repositories with 10 tags each (many jobs per image name,
    // as CloneSet pre-download produces); created paused, the NodeImages are then filled with what
    // the jobs would have written, and every tag is answered.
    t0 = Date.now();
    const created: ImagePullJob[] = [];
    await createAll(J, async (k) => {
      const repo = `bench.local/repo-${String(k % REPOS).padStart(2, '0')}`;
      created[k] = await jobs.create({
        metadata: { name: `scale-b-${String(k).padStart(3, '0')}`, namespace: NS },
        spec: { image: `${repo}:t${Math.floor(k / REPOS)}`, parallelism: 0, completionPolicy: { type: 'Never' }, selector: { matchLabels: { 'kruise-bench/group': 'b', 'kruise-bench/run': RUN } } },
      });
    }, 8);
    const targets = created.map((j) => {
      const t = jobTarget(j, [], jobs.apiVersion);
      if ('invalid' in t) throw new Error(t.invalid);
      return t;
    });
    let filled = 0;
    await createAll(M, async (i) => {
      const name = nodeName(i);
      await updateWithRetry(nis, undefined, name, (fresh) => {
        const images: Record<string, ImageSpec> = { ...(fresh.spec?.images ?? {}) };
        for (const t of targets) {
          const entry = (images[t.image] ??= { tags: [] });
          entry.tags.push({ tag: t.tag, createdAt: now(), pullPolicy: tagPullPolicy(t, name), ownerReferences: [t.ownerRef], version: 0, imagePullPolicy: t.imagePullPolicy });
        }
        for (const e of Object.values(images)) e.tags.sort((x, y) => (x.tag < y.tag ? -1 : x.tag > y.tag ? 1 : 0));
        return { ...fresh, spec: { images } };
      }, { initial: inf.get(name), attempts: 20 });
      // The node's daemon answers right away: these nodes have no kubelet, so they are not Ready, and
      // the manager fails tags on such nodes that are not answered within a minute.
      await updateWithRetry(nis, undefined, name, sim.answer, { status: true, attempts: 20 });
      if (++filled % 1000 === 0) log(`(b) ${filled} of ${M} NodeImages filled after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }, 16);
    const finished = (j: ImagePullJob): boolean => {
      const st = jobInf.get(`${NS}/${j.metadata?.name ?? ''}`)?.status;
      return (st?.succeeded ?? 0) + (st?.failed ?? 0) === M;
    };
    await until(jobInf, () => created.every(finished), 1_800_000, 'jobs b');
    const failedB = created.reduce((a, j) => a + (jobInf.get(`${NS}/${j.metadata?.name ?? ''}`)?.status?.failed ?? 0), 0);
    log(`(b) ${J} jobs done on ${M} nodes after ${((Date.now() - t0) / 1000).toFixed(0)} s, ${failedB} node failures`);
    await sleep(10_000);

    const q0 = await scrape();
    const c0 = cpuSeconds(pid);
    await sleep(WINDOW_MS);
    const q1 = await scrape();
    const c1 = cpuSeconds(pid);
    const leaseWrites = writes(q1, 'leases') - writes(q0, 'leases');
    rows.push([`(b) ${J} jobs over ${M} nodes, nothing changing (${WINDOW_MS / 1000} s)`, failedB > 0 ? `(${failedB} node failures)` : '']);
    rows.push(['  reconciles per second', ((reconciles(q1) - reconciles(q0)) / (WINDOW_MS / 1000)).toFixed(2)]);
    record('managerRestReconcilesPerSecond', (reconciles(q1) - reconciles(q0)) / (WINDOW_MS / 1000));
    record('managerRestCpuPercent', (100 * (c1 - c0)) / (WINDOW_MS / 1000));
    record('managerRestRssMiB', rssMiB(pid));
    record('managerRestJobs', J);
    record('managerRestNodes', M);
    record('managerRestCachedNodes', N);
    rows.push(['  API writes (leader-election lease renewals aside)', String(writes(q1) - writes(q0) - leaseWrites)]);
    rows.push(['  manager CPU', `${((100 * (c1 - c0)) / (WINDOW_MS / 1000)).toFixed(2)}% of a core`]);
    // (a)'s other Nodes and NodeImages stay in the cluster, so in the manager's caches too: at
    // BENCH_NODES=1000 the RSS is that of (b) alone.
    const limit = podMemoryLimitOf(pid);
    const where = limit === undefined ? 'without a memory limit' : `in a memory cgroup of the pod's ${(limit / 1048576).toFixed(0)} MiB limit`;
    rows.push([N > M ? `  manager RSS, ${where} (its caches also hold (a)'s other ${N - M} Nodes and NodeImages)` : `  manager RSS, ${where}`, `${rssMiB(pid).toFixed(0)} MiB`]);
    rows.push(['  of it: V8 heap committed (in use); of the heap, old space; memory outside the heap (external)', memoryParts(q1)]);
    rows.push(['  manager peak RSS since it started (filling the NodeImages included)', `${peakRssMiB(pid).toFixed(0)} MiB`]);

    // One tag on one node goes from Succeeded to Failed, as a daemon re-reporting would write it.
    const vt = targets[0];
    if (!vt) throw new Error('no job');
    const node = nodeName(0);
    const sameImage = targets.filter((t) => t.image === vt.image).length;
    await updateWithRetry(nis, undefined, node, (fresh) => {
      const s = structuredClone(fresh.status);
      const t = s?.imageStatuses?.[vt.image]?.tags.find((x) => x.tag === vt.tag);
      if (!s || !t) throw new Error('no status to change');
      t.phase = 'Failed';
      t.message = 'changed by the benchmark';
      return { ...fresh, status: { ...s, succeeded: (s.succeeded ?? 0) - 1, failed: (s.failed ?? 0) + 1 } };
    }, { status: true });
    const c2 = cpuSeconds(pid);
    const w0 = Date.now();
    await sleep(WINDOW_MS);
    const q2 = await scrape();
    const c3 = cpuSeconds(pid);
    const woke = reconciles(q2, 'imagepulljob-controller') - reconciles(q1, 'imagepulljob-controller');
    rows.push([`(b) then one tag's status on one node changes (${WINDOW_MS / 1000} s)`, '']);
    record('managerWokeReconciles', woke);
    record('managerWokeUpstream', sameImage);
    rows.push(['  ImagePullJob reconciles', `${woke} (the job owning that tag; upstream 1.8/1.9 wakes all ${sameImage} jobs of that image on the node)`]);
    rows.push(['  reconciles per second, all controllers', ((reconciles(q2) - reconciles(q1)) / ((Date.now() - w0) / 1000)).toFixed(2)]);
    rows.push(['  API writes (lease renewals aside)', `${writes(q2) - writes(q1) - (writes(q2, 'leases') - writes(q1, 'leases'))} (the job's status)`]);
    rows.push(['  manager CPU', `${((100 * (c3 - c2)) / (WINDOW_MS / 1000)).toFixed(2)}% of a core`]);

    const heap = await heapSnapshot(pid, snapDir);

    console.log('## kruise-manager at scale: ImagePullJob over thousands of nodes\n');
    console.log(
      `One kruise-manager process (webhook and controllers, \`--rest-config-qps 1000\`) on the local cluster's real API server; ${N} Node objects without kubelet and their NodeImages; ` +
        'a simulated daemon per node answers each tag through the status subresource. In (b) the jobs are created paused and the NodeImages filled with exactly what the jobs write ' +
        `(${J} tags each, owned by the jobs), which makes every job finish without ${J * M} separate writes; the measurement is of the state after.\n`,
    );
    console.log('| measurement | value |\n| --- | --- |');
    for (const r of rows) console.log(`| ${r[0]} | ${r[1]} |`);
    if (heap) {
      console.log(`\nWhere the manager's heap goes in (b) (a V8 heap snapshot taken after the runs: ${(heap.total / 1048576).toFixed(0)} MiB in objects, self sizes, largest first):\n`);
      console.log('| what | MiB | count |\n| --- | --- | --- |');
      for (const r of heap.rows) console.log(`| ${r.what} | ${(r.bytes / 1048576).toFixed(1)} | ${r.count} |`);
    }
    console.log(`\nTotal benchmark time ${((Date.now() - start) / 60000).toFixed(1)} min.\n`);
  } finally {
    log('cleaning up');
    if (process.env['BENCH_KEEP_OBJECTS'] === '1') {
      // The environment is thrown away next (npm run bench): only the manager and its webhook go.
      ac.abort();
      await stopPid(pid);
      removePodMemoryCgroup(cgroupName('manager', ports.health));
      await deleteWebhooks();
    } else {
      await jobs.list(NS).then((l) => Promise.all(l.items.map((j) => jobs.delete(NS, j.metadata?.name ?? '').catch(() => undefined))));
      // The manager finalizes the jobs; then it goes, and with it the webhook.
      for (let i = 0; i < 60 && (await jobs.list(NS)).items.length > 0; i++) await sleep(1000);
      ac.abort();
      await stopPid(pid);
      removePodMemoryCgroup(cgroupName('manager', ports.health));
      await deleteWebhooks();
      await createAll(N, (i) => nis.delete(undefined, nodeName(i)).catch(() => undefined));
      await createAll(N, (i) => nodes.delete(undefined, nodeName(i)).catch(() => undefined));
      await new Resource<KubeObject>(rest, core.namespaces).delete(undefined, NS).catch(() => undefined);
    }
    await rest.close();
  }
}

await main();
