// Runs kruise-ts on a local environment the way a cluster install would: deploy/'s namespaces,
// RBAC and webhook configurations applied, then one kruise-manager and one kruise-daemon per node
// as processes of the built binaries, each with its ServiceAccount's token, so every call they make
// goes through deploy/'s RBAC, and in a memory cgroup of its pod's limit (hack/pod-memory.ts), so
// its heap is sized as in the pod (used by the integration suites and the benchmarks).
//   node dist/hack/kruise.js up ENV_JSON [manager flags...] | down ENV_JSON
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { RestClient } from '../kube/rest.js';
import { sleep } from '../kube/informer.js';
import { DEFAULT_KRUISE_NAMESPACE, MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../api/installation.js';
import { applicable, apply, serviceAccountToken } from './apply.js';
import { deployDir, render } from './kustomize.js';
import { DAEMON_V8_FLAGS, MANAGER_V8_FLAGS } from './v8-flags.js';
import { projectRoot } from './root.js';
import { cgroupName, nodeInPodMemory, removePodMemoryCgroup, type Workload } from './pod-memory.js';

export interface LocalEnv {
  envDir: string;
  kubeconfig: string;
  registryOpen: string;
  nodes: Array<{ name: string; criSocket: string; containerdDir: string }>;
  /** The API server's audit log of kruise-ts's ServiceAccounts' requests (hack/lib/cluster.sh). */
  auditLog: string;
}

export interface Installation {
  manager: { pid: number; log: string; healthPort: number; metricsPort: number; webhookPort: number };
  daemons: Array<{ node: string; pid: number; log: string; port: number; args: string[] }>;
}

const root = projectRoot();

/** The environment's KRUISE_TS_PORT_OFFSET, read back from its open registry's port (5000 + offset). */
export function portOffset(env: { registryOpen: string }): number {
  return Number(env.registryOpen.split(':')[1]) - 5000;
}

function dir(env: LocalEnv): string {
  return join(env.envDir, 'kruise');
}

/** Starts node with `args`, detached, inside the memory cgroup `cgroup` (the pod's limit) when one can be made. */
export function startNode(args: string[], log: string, workload: Workload, cgroup: string): number {
  const out = openSync(log, 'a');
  const child = spawn(...nodeInPodMemory(args, workload, cgroup), { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  return child.pid ?? 0;
}

function identityKubeconfig(env: LocalEnv, who: 'manager' | 'daemon'): string {
  return join(dir(env), `kubeconfig-${who}`);
}

export function managerArgs(env: LocalEnv, extra: string[] = []): string[] {
  const o = portOffset(env);
  return [
    ...MANAGER_V8_FLAGS,
    join(root, 'dist', 'manager', 'main.js'),
    '--kubeconfig', identityKubeconfig(env, 'manager'),
    '--webhook-port', String(9876 + o),
    '--webhook-url', `https://127.0.0.1:${9876 + o}`,
    '--metrics-addr', `127.0.0.1:${18080 + o}`,
    '--health-probe-addr', `127.0.0.1:${18000 + o}`,
    '--nodeimage-creation-delay-seconds', '1',
    ...extra,
  ];
}

export function daemonArgs(env: LocalEnv, i: number, extra: string[] = []): string[] {
  const n = env.nodes[i];
  if (!n) throw new Error(`no node ${i}`);
  return [
    ...DAEMON_V8_FLAGS,
    join(root, 'dist', 'daemon', 'main.js'),
    '--node-name', n.name,
    '--kubeconfig', identityKubeconfig(env, 'daemon'),
    '--runtime-endpoint', `unix://${n.criSocket}`,
    '--registry-config-path', join(n.containerdDir, 'certs.d'),
    '--addr', `127.0.0.1:${10231 + portOffset(env) + 10 * i}`,
    '--status-write-interval-seconds', '1',
    ...extra,
  ];
}

/** Whether a process with this PID still exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitHttp(url: string, pid: number, log: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    const alive = processAlive(pid);
    if (!alive || Date.now() > deadline) {
      throw new Error(`${url} not ready (${alive ? 'timeout' : 'process exited'}); log ${log}:\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-3000) : ''}`);
    }
    await sleep(200);
  }
}

/** A kubeconfig at `out` with the admin's server and CA and `token` as its only credential. */
export function withToken(adminKubeconfig: string, token: string, out: string): void {
  const kc = load(readFileSync(adminKubeconfig, 'utf8')) as { users?: Array<{ name: string; user: Record<string, unknown> }> };
  for (const u of kc.users ?? []) u.user = { token };
  writeFileSync(out, dump(kc), { mode: 0o600 });
}

/** Starts a kruise-manager process with `args` and waits until it is ready. */
export async function startManager(args: string[], log: string, healthPort: number): Promise<number> {
  const cgroup = cgroupName('manager', healthPort);
  const pid = startNode(args, log, 'manager', cgroup);
  try {
    await waitHttp(`http://127.0.0.1:${healthPort}/readyz`, pid, log);
  } catch (err) {
    await abandon([{ pid, cgroup }]);
    throw err;
  }
  return pid;
}

/**
 * Stops processes that never became ready and removes their memory cgroups: a failed start is
 * recorded nowhere `down` would find them.
 */
async function abandon(started: Array<{ pid: number; cgroup: string }>): Promise<void> {
  await Promise.all(started.map((p) => stopPid(p.pid)));
  for (const p of started) removePodMemoryCgroup(p.cgroup);
}

/**
 * Replaces the installation's kruise-manager with a new process on the same ports (stopping the old
 * one if it still runs), and records it for `down`.
 */
export async function restartManager(env: LocalEnv, managerExtra: string[] = []): Promise<Installation> {
  const file = join(dir(env), 'installation.json');
  const inst = JSON.parse(readFileSync(file, 'utf8')) as Installation;
  await stopPid(inst.manager.pid);
  inst.manager.pid = await startManager(managerArgs(env, managerExtra), inst.manager.log, inst.manager.healthPort);
  writeFileSync(file, JSON.stringify(inst, null, 2));
  return inst;
}

/** deploy/'s namespaces, RBAC, ServiceAccounts, webhook Secret and configurations, and the tokens. */
export async function install(env: LocalEnv): Promise<void> {
  mkdirSync(dir(env), { recursive: true });
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    await apply(rest, render(join(deployDir(), 'base')).filter((o) => o.kind !== undefined && o.kind in applicable));
    for (const who of ['manager', 'daemon'] as const) {
      withToken(env.kubeconfig, await serviceAccountToken(rest, DEFAULT_KRUISE_NAMESPACE, `kruise-ts-${who}`), identityKubeconfig(env, who));
    }
  } finally {
    await rest.close();
  }
}

/** Starts the manager, then a daemon per node (with `daemonExtra` flags), and waits until all are ready. */
export async function up(env: LocalEnv, daemonExtra: string[] = [], managerExtra: string[] = []): Promise<Installation> {
  await install(env);
  const o = portOffset(env);
  const mlog = join(dir(env), 'manager.log');
  const mpid = await startManager(managerArgs(env, managerExtra), mlog, 18000 + o);
  const daemons = env.nodes.map((n, i) => {
    const log = join(dir(env), `daemon-${n.name}.log`);
    const args = daemonArgs(env, i, daemonExtra);
    const port = 10231 + o + 10 * i;
    return { node: n.name, pid: startNode(args, log, 'daemon', cgroupName('daemon', port)), log, port, args };
  });
  try {
    for (const d of daemons) await waitHttp(`http://127.0.0.1:${d.port}/readyz`, d.pid, d.log);
  } catch (err) {
    await abandon([{ pid: mpid, cgroup: cgroupName('manager', 18000 + o) }, ...daemons.map((d) => ({ pid: d.pid, cgroup: cgroupName('daemon', d.port) }))]);
    throw err;
  }
  const inst: Installation = { manager: { pid: mpid, log: mlog, healthPort: 18000 + o, metricsPort: 18080 + o, webhookPort: 9876 + o }, daemons };
  writeFileSync(join(dir(env), 'installation.json'), JSON.stringify(inst, null, 2));
  return inst;
}

function readInstallation(env: LocalEnv): Installation {
  return JSON.parse(readFileSync(join(dir(env), 'installation.json'), 'utf8')) as Installation;
}

/** Stops the installed daemon of one node (SIGKILL: as a crash), keeping its slot for a restart. */
export async function stopInstalledDaemon(env: LocalEnv, node: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const d = readInstallation(env).daemons.find((x) => x.node === node);
  if (!d) throw new Error(`no installed daemon for ${node}`);
  if (signal === 'SIGKILL') {
    try {
      process.kill(d.pid, 'SIGKILL');
    } catch {
      return;
    }
  }
  await stopPid(d.pid);
}

/** Starts the daemon of one node again (same arguments and log) and records its new pid. */
export async function startInstalledDaemon(env: LocalEnv, node: string): Promise<void> {
  const inst = readInstallation(env);
  const d = inst.daemons.find((x) => x.node === node);
  if (!d) throw new Error(`no installed daemon for ${node}`);
  d.pid = startNode(d.args, d.log, 'daemon', cgroupName('daemon', d.port));
  writeFileSync(join(dir(env), 'installation.json'), JSON.stringify(inst, null, 2));
  await waitHttp(`http://127.0.0.1:${d.port}/readyz`, d.pid, d.log);
}

export async function stopPid(pid: number, graceMs = 10_000): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  for (;;) {
    if (!processAlive(pid)) return;
    if (Date.now() > deadline) break;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  // Until the kernel has taken it out, its memory cgroup cannot be removed.
  for (let i = 0; i < 50 && processAlive(pid); i++) await sleep(100);
}

export async function down(env: LocalEnv): Promise<void> {
  const file = join(dir(env), 'installation.json');
  if (existsSync(file)) {
    const inst = JSON.parse(readFileSync(file, 'utf8')) as Installation;
    await Promise.all([...inst.daemons.map((d) => stopPid(d.pid)), stopPid(inst.manager.pid)]);
    for (const cgroup of [...inst.daemons.map((d) => cgroupName('daemon', d.port)), cgroupName('manager', inst.manager.healthPort)]) {
      if (!removePodMemoryCgroup(cgroup)) process.stderr.write(`memory cgroup ${cgroup} kept: a process is still in it\n`);
    }
    rmSync(file);
  }
  // Without its manager the webhook would refuse every write of the kinds it covers. The lease and
  // the certificate Secret go too, so the next installation starts as a first one does.
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    for (const path of [
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${MUTATING_WEBHOOK_CONFIGURATION}`,
      `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${VALIDATING_WEBHOOK_CONFIGURATION}`,
      '/apis/coordination.k8s.io/v1/namespaces/kruise-ts-system/leases/kruise-ts-manager',
      '/api/v1/namespaces/kruise-ts-system/secrets/kruise-ts-webhook-certs',
    ]) {
      await rest.request('DELETE', path).catch(() => undefined);
    }
  } finally {
    await rest.close();
  }
}

if (process.argv[1]?.endsWith('kruise.js')) {
  // Arguments after ENV_JSON go to the manager (e.g. a larger API budget for the scale simulation).
  const [verb, envFile, ...managerExtra] = process.argv.slice(2);
  const env = JSON.parse(readFileSync(envFile ?? '', 'utf8')) as LocalEnv;
  if (verb === 'up') {
    const inst = await up(env, [], managerExtra);
    console.log(`kruise-manager pid ${inst.manager.pid} (webhook :${inst.manager.webhookPort}), daemons: ${inst.daemons.map((d) => `${d.node} pid ${d.pid}`).join(', ')}`);
  } else if (verb === 'down') {
    await down(env);
  } else {
    console.error('usage: node dist/hack/kruise.js up ENV_JSON [manager flags...] | down ENV_JSON');
    process.exitCode = 2;
  }
}
