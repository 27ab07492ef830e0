// Start-up and footprint of each binary on the local environment: process start → /readyz answers
// 200 (kruise-daemon: runtime reached, its NodeImage and CRR informers synced; kruise-manager:
// webhook certificates and server, caches synced), RSS when ready, and SIGTERM → exit.
//   node dist/hack/bench/startup.js ENV_JSON
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { ApiError, RestClient } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { DAEMON_V8_FLAGS, MANAGER_V8_FLAGS } from '../v8-flags.js';
import { portOffset } from '../kruise.js';
import { cgroupName, nodeInPodMemory, podMemoryLimitOf, removePodMemoryCgroup, type Workload } from '../pod-memory.js';
import { exited, rssMiB } from './proc.js';
import { projectRoot } from '../root.js';
import { fmt, record, summarize } from './stats.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE, DEFAULT_KRUISE_NAMESPACE } from '../../api/installation.js';

interface BenchEnv {
  kubeconfig: string;
  registryOpen: string;
  criSocket: string;
}

const env = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as BenchEnv;
const runs = Number(process.env['BENCH_RUNS'] ?? 5);
const offset = portOffset(env);
const root = projectRoot();


async function ready(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with ${child.exitCode}`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms`);
}

interface Sample {
  readyMs: number;
  rss: number;
  stopMs: number;
  /** The memory limit it ran under (undefined: none could be set here). */
  limit: number | undefined;
}

/** One start and stop, in a memory cgroup of the pod's limit (hack/pod-memory.ts): Node sizes its heap from it. */
async function measure(args: string[], readyz: string, workload: Workload, cgroup: string): Promise<Sample> {
  const t0 = performance.now();
  const child = spawn(...nodeInPodMemory(args, workload, cgroup), { stdio: 'ignore' });
  await ready(readyz, child).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const readyMs = performance.now() - t0;
  const rss = rssMiB(child.pid ?? 0);
  const limit = podMemoryLimitOf(child.pid ?? 0);
  const t1 = performance.now();
  child.kill('SIGTERM');
  await exited(child);
  return { readyMs, rss, limit, stopMs: performance.now() - t1 };
}

const daemonPort = 10299 + offset;
const daemonArgs = [
  ...DAEMON_V8_FLAGS,
  join(root, 'dist', 'daemon', 'main.js'),
  '--node-name', 'bench-startup',
  '--kubeconfig', env.kubeconfig,
  '--runtime-endpoint', `unix://${env.criSocket}`,
  '--addr', `127.0.0.1:${daemonPort}`,
  '--log-level', 'warn',
];
const managerHealth = 18003 + offset;
const managerArgs = [
  ...MANAGER_V8_FLAGS,
  join(root, 'dist', 'manager', 'main.js'),
  '--kubeconfig', env.kubeconfig,
  '--webhook-port', String(9877 + offset),
  '--webhook-url', `https://127.0.0.1:${9877 + offset}`,
  '--metrics-addr', `127.0.0.1:${18083 + offset}`,
  '--health-probe-addr', `127.0.0.1:${managerHealth}`,
  '--leader-election-id', 'kruise-manager-bench-startup',
  '--log-level', 'warn',
];

// The manager keeps its webhook certificates in its namespace: as an installation would have it.
const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
for (const name of [DEFAULT_KRUISE_NAMESPACE, DEFAULT_DAEMON_CONFIG_NAMESPACE]) {
  await new Resource<KubeObject>(rest, core.namespaces).create({ metadata: { name } }).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.alreadyExists)) throw err;
  });
}
await rest.close();

const rows: string[] = [];
let limited = true;
for (const [name, args, url, workload, port] of [
  ['kruise-daemon', daemonArgs, `http://127.0.0.1:${daemonPort}/readyz`, 'daemon', daemonPort],
  ['kruise-manager', managerArgs, `http://127.0.0.1:${managerHealth}/readyz`, 'manager', managerHealth],
] as const) {
  const samples: Sample[] = [];
  const cgroup = cgroupName(workload, port);
  for (let i = 0; i < runs; i++) samples.push(await measure([...args], url, workload, cgroup));
  removePodMemoryCgroup(cgroup);
  limited &&= samples.every((s) => s.limit !== undefined);
  record(`${name} readyMs`, summarize(samples.map((s) => s.readyMs)).median);
  record(`${name} rssMiB`, summarize(samples.map((s) => s.rss)).median);
  rows.push(
    `| ${name} | ${fmt(summarize(samples.map((s) => s.readyMs)))} | ${fmt(summarize(samples.map((s) => s.rss)), 'MiB')} | ${fmt(summarize(samples.map((s) => s.stopMs)))} |`,
  );
}

console.log('## Start-up and footprint\n');
console.log(
  `Each binary started from the build against the local cluster (admin identity), timed from process start until \`/readyz\` answers 200 (daemon: runtime reached and informers synced; manager: webhook certificates loaded, webhook serving, caches synced), then stopped with SIGTERM. ${limited ? "Each runs in a memory cgroup of its pod's limit from deploy/base, as kubelet places it (Node sizes its heap from that limit)." : 'They run without their pods\' memory limits (no memory cgroup could be made here).'} The daemon runs with the DaemonSet's V8 settings (\`${DAEMON_V8_FLAGS.join(' ')}\`), the manager with the Deployment's (\`${MANAGER_V8_FLAGS.join(' ')}\`).\n`,
);
console.log('| binary | start → ready | RSS when ready | SIGTERM → exit |\n| --- | --- | --- | --- |');
for (const r of rows) console.log(r);
console.log();
