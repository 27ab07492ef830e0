// CRR benchmark on the local cluster with kruise-ts installed (webhook, manager, a daemon per node):
// latency from a ContainerRecreateRequest's creation (the API server's answer to the create, after
// the admission webhook) to the daemon's StopContainer call, and the time 50 CRRs on 50 pods take to
// complete. The daemon logs "stopping container" right before the CRI call; its timestamp against
// the creation time on the same clock gives the latency. Containers exit
// on TERM, so no grace period is spent; none is counted anyway.
import { readFileSync } from 'node:fs';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import { kruise } from '../../kube/kruise.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { RestClient } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { down, up, type Installation, type LocalEnv } from '../kruise.js';
import { percentile } from './stats.js';
import { defaultServiceAccount, eventuallyTrue } from '../wait.js';

interface PodStatus {
  phase?: string;
  reason?: string;
  message?: string;
  containerStatuses?: Array<{ ready?: boolean; state?: { running?: unknown } }>;
}
type Pod = KubeObject & { spec?: unknown; status?: PodStatus };

const envFile = process.argv[2] ?? '';
const env = JSON.parse(readFileSync(envFile, 'utf8')) as LocalEnv & { registryOpen: string };
const sequentialRuns = Number(process.env['BENCH_CRR_SEQUENTIAL'] ?? 20);
const burst = 50;
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
const pods = new Resource<Pod>(rest, core.pods);
const crrs = new Resource<ContainerRecreateRequest>(rest, kruise.crrs);
const namespaces = new Resource<KubeObject>(rest, core.namespaces);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const nsPrefix = 'bench-crr-';
const ns = `${nsPrefix}${Math.random().toString(36).slice(2, 7)}`;

/**
 * Waits until no benchmark namespace is left: its 120 pods, still terminating after a run, would
 * take the room a node's kubelet has (maxPods 110) from the next run's.
 */
async function noBenchNamespaces(): Promise<void> {
  const benchNamespaces = async (): Promise<string[]> =>
    (await namespaces.list(undefined)).items.map((n) => n.metadata?.name ?? '').filter((n) => n.startsWith(nsPrefix));
  await Promise.all((await benchNamespaces()).map((n) => namespaces.delete(undefined, n).catch(() => undefined)));
  if (!(await eventuallyTrue(async () => (await benchNamespaces()).length === 0, 300_000, 2000))) {
    throw new Error(`namespaces ${(await benchNamespaces()).join(', ')} are still there after 300 s`);
  }
}

function pod(name: string, node: string): Pod {
  return {
    metadata: { name, namespace: ns },
    spec: {
      nodeName: node,
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [{ name: 'main', image: `${env.registryOpen}/busybox:1.0`, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"] }],
    },
  };
}

async function allRunning(names: string[]): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    const list = await pods.list(ns);
    const ours = list.items.filter((p) => names.includes(p.metadata?.name ?? ''));
    const ready = ours.filter((p) => p.status?.containerStatuses?.[0]?.ready === true).length;
    if (ready === names.length) return;
    // A kubelet refuses pods beyond its maxPods (110) for good, e.g. while an earlier run's are still going.
    const failed = ours.find((p) => p.status?.phase === 'Failed');
    if (failed) throw new Error(`pod ${failed.metadata?.name ?? ''} failed: ${failed.status?.reason ?? ''} ${failed.status?.message ?? ''}`);
    if (Date.now() > deadline) throw new Error(`only ${ready}/${names.length} pods running`);
    await sleep(1000);
  }
}

/**
 * The daemons' "stopping container" log times per CRR name, read from their log files, and how long
 * before each the daemon had first seen the CRR (its watch delivered it).
 */
function stopTimes(logs: string[], inDaemon?: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const file of logs) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('"stopping container"') || !line.includes(`"crr":"${ns}/`)) continue;
      const rec = JSON.parse(line) as { crr: string; timestamp: string; sinceSeenMs?: number };
      const name = rec.crr.slice(ns.length + 1);
      if (out.has(name)) continue;
      out.set(name, Date.parse(rec.timestamp));
      if (rec.sinceSeenMs !== undefined) inDaemon?.set(name, rec.sinceSeenMs);
    }
  }
  return out;
}

async function waitFor<T>(fn: () => T | undefined, timeoutMs: number, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(everyMs);
  }
}

/** The CRRs of `names` that completed, and of them those whose container was not recreated. */
async function completed(names: Set<string>): Promise<{ done: number; failed: number }> {
  const list = await crrs.list(ns);
  const done = list.items.filter((c) => names.has(c.metadata?.name ?? '') && c.status?.phase === 'Completed');
  return { done: done.length, failed: done.filter((c) => c.status?.containerRecreateStates?.[0]?.phase !== 'Succeeded').length };
}

/**
 * The daemons' CRI calls by method and API requests by verb and resource, summed over `ports` (their
 * metrics): what a burst costs per CRR, apart from how fast it went.
 */
async function daemonCalls(ports: number[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const port of ports) {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    for (const m of text.matchAll(/^kruise_daemon_cri_requests_total\{method="([^"]+)",result="[^"]+"\} (\d+)$/gm)) {
      out.set(`CRI ${m[1]}`, (out.get(`CRI ${m[1]}`) ?? 0) + Number(m[2]));
    }
    for (const m of text.matchAll(/^kruise_daemon_api_requests_total\{verb="([^"]+)",resource="([^"]+)",code="[^"]+"\} (\d+)$/gm)) {
      if (m[1] === 'watch') continue;
      const key = `API ${m[1]} ${m[2]}`;
      out.set(key, (out.get(key) ?? 0) + Number(m[3]));
    }
  }
  return out;
}

function callsPerCrr(before: Map<string, number>, after: Map<string, number>, n: number): string {
  return [...after]
    .map(([k, v]) => [k, (v - (before.get(k) ?? 0)) / n] as const)
    .filter(([, per]) => per > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, per]) => `${k} ${per.toFixed(2)}`)
    .join(', ');
}

const crr = (name: string): ContainerRecreateRequest => ({ metadata: { name, namespace: ns }, spec: { podName: name, containers: [{ name: 'main' }] } });
const nodes = env.nodes.map((n) => n.name);
const seqNames = Array.from({ length: sequentialRuns }, (_, i) => `seq-${i}`);
const burstNames = Array.from({ length: burst }, (_, i) => `burst-${i}`);

const row = (label: string, xs: number[]): string =>
  `| ${label} | ${percentile(xs, 50).toFixed(0)} ms | ${percentile(xs, 99).toFixed(0)} ms | ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms | ${xs.length} |`;

/** Creates the CRRs at once; returns the stop latencies and the time until all completed. */
async function runBurst(names: string[], inst: Installation): Promise<{ latency: number[]; inDaemon: number[]; delivered: number[]; totalMs: number; createMs: number; failed: number; calls: string }> {
  const logs = inst.daemons.map((d) => d.log);
  const ports = inst.daemons.map((d) => d.port);
  const calls0 = await daemonCalls(ports);
  const created = new Map<string, number>();
  // The benchmark watches the CRRs too: when the API server delivers each to a watcher other than
  // the daemon, beside the same clock, separates its share of the latency from the daemon's.
  const added = new Map<string, number>();
  const watching = new AbortController();
  const from = (await crrs.list(ns, { limit: 1 })).metadata?.resourceVersion ?? '';
  const watch = crrs
    .watch(ns, { resourceVersion: from }, (ev) => {
      const name = ev.object.metadata?.name ?? '';
      if (ev.type === 'ADDED' && !added.has(name)) added.set(name, Date.now());
    }, watching.signal)
    .catch(() => undefined);
  await sleep(200);
  const t0 = Date.now();
  await Promise.all(
    names.map(async (name) => {
      await crrs.create(crr(name));
      created.set(name, Date.now());
    }),
  );
  const createMs = Date.now() - t0;
  const set = new Set(names);
  const deadline = Date.now() + 300_000;
  let state = await completed(set);
  while (state.done < names.length) {
    if (Date.now() > deadline) throw new Error('burst did not complete');
    await sleep(200);
    state = await completed(set);
  }
  const totalMs = Date.now() - t0;
  const calls = callsPerCrr(calls0, await daemonCalls(ports), names.length);
  watching.abort();
  await watch;
  const seen = new Map<string, number>();
  const stops = stopTimes(logs, seen);
  const latency = names.map((n) => (stops.get(n) ?? NaN) - (created.get(n) ?? NaN)).filter((x) => !Number.isNaN(x));
  const delivered = names.flatMap((n) => (added.has(n) && created.has(n) ? [(added.get(n) ?? 0) - (created.get(n) ?? 0)] : []));
  return { latency, inDaemon: names.flatMap((n) => seen.get(n) ?? []), delivered, totalMs, createMs, failed: state.failed, calls };
}

const fastNames = Array.from({ length: burst }, (_, i) => `fast-${i}`);
const fastQps = ['--rest-config-qps', '50', '--rest-config-burst', '100'];
const rows: string[] = [];
const totals: string[] = [];
try {
  await noBenchNamespaces();
  await namespaces.create({ metadata: { name: ns } });
  await defaultServiceAccount(rest, ns);
  const all = [...seqNames, ...burstNames, ...fastNames];
  for (let i = 0; i < all.length; i += 10) await Promise.all(all.slice(i, i + 10).map((n, j) => pods.create(pod(n, nodes[(i + j) % nodes.length] ?? ''))));
  await allRunning(all);
  await sleep(2000);

  // The daemons with their default flags.
  const inst = await up(env);
  const logs = inst.daemons.map((d) => d.log);
  try {
    // One at a time: the path's own latency on an idle system.
    const sequential: number[] = [];
    for (const name of seqNames) {
      await crrs.create(crr(name));
      const createdAt = Date.now();
      const at = await waitFor(() => stopTimes(logs).get(name), 30_000);
      sequential.push(at - createdAt);
      await sleep(300);
    }
    rows.push(row('one CRR at a time', sequential));
    // The burst's calls per CRR are the change in the daemons' metrics over it: the last sequential
    // CRRs' StopContainer calls (counted when they return, once the container exited) and status
    // writes would otherwise land in it.
    if (!(await eventuallyTrue(async () => (await completed(new Set(seqNames))).done === seqNames.length, 120_000, 500))) {
      throw new Error('the sequential CRRs did not complete within 120 s');
    }
    const b = await runBurst(burstNames, inst);
    rows.push(row(`${burst} CRRs on ${burst} pods at once`, b.latency));
    rows.push(row(`… of which in the daemon (its watch delivered the CRR → StopContainer)`, b.inDaemon));
    rows.push(row(`… the API server's answer → its watch delivering the CRR to another client (this benchmark)`, b.delivered));
    totals.push(`| default (QPS 5, burst 10) | ${(b.totalMs / 1000).toFixed(1)} s | ${b.createMs} ms | ${b.failed} | ${b.calls} |`);
  } finally {
    await down(env);
  }

  // The same burst with a larger API budget: what the daemon's own path costs.
  const fast = await up(env, fastQps);
  try {
    const b = await runBurst(fastNames, fast);
    rows.push(row(`${burst} CRRs on ${burst} pods at once, ${fastQps.join(' ')}`, b.latency));
    rows.push(row(`… of which in the daemon`, b.inDaemon));
    rows.push(row(`… the API server's answer → its watch delivering the CRR to another client`, b.delivered));
    totals.push(`| ${fastQps.join(' ')} | ${(b.totalMs / 1000).toFixed(1)} s | ${b.createMs} ms | ${b.failed} | ${b.calls} |`);
  } finally {
    await down(env);
  }

  console.log('## ContainerRecreateRequest: creation → StopContainer\n');
  console.log(`kruise-ts installed on the local cluster (${nodes.length} real kubelet nodes): the CRR goes through the admission webhook, the daemon's watch, a CRI ListContainers filtered to the pod, then StopContainer (the status write recording the stop goes out beside it). Latency is from the API server's answer to the create (the CRR exists, admitted by the webhook) to the daemon's log line written right before StopContainer (same clock); containers exit on TERM and no grace period is counted. Daemons run with their default flags (API QPS 5, burst 10, as upstream and the kubelet; 32 CRR workers) unless the row says otherwise. A negative minimum means the daemon saw the CRR before the creating client got its answer.\n`);
  console.log('| case | median | p99 | min–max | CRRs |\n| --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
  console.log(`\n${burst} CRRs on ${burst} pods (${burst / nodes.length} per node) created at once, until every one is Completed, with its container recreated and ready, or failed when containerd's StopContainer failed twice or did not return within the daemon's deadline (the grace period and 2 min, as the kubelet's); the CRR then says so. Each container comes back only once its kubelet restarted it and reported it (kubelets write pod status at their default 5 QPS); a daemon API budget ten times larger leaves this total where it is when the daemon is not what bounds it. The daemons' calls per CRR over the whole burst, to its completion, come from their metrics (CRI calls by method; API requests by verb and resource, watches left out):\n`);
  console.log('| daemon flags | total | creating the 50 CRRs | containers not recreated (their stop failed) | daemons\' calls per CRR |\n| --- | --- | --- | --- | --- |');
  for (const t of totals) console.log(t);
  console.log('');
} finally {
  await noBenchNamespaces().catch((err: unknown) => console.error('cleaning up:', err));
  await rest.close();
}
