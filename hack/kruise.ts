// Runs kruise-ts on a local environment the way a cluster install would: one kruise-manager and
// one kruise-daemon per node, as processes of the built binaries (used by the tests and the demo).
//   node dist/hack/kruise.js up|down ENV_JSON
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { ApiError, RestClient } from '../kube/rest.js';
import { core, Resource, type KubeObject } from '../kube/resource.js';
import { MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION } from '../manager/webhook/configurations.js';

export interface LocalEnv {
  envDir: string;
  kubeconfig: string;
  registryOpen: string;
  nodes: Array<{ name: string; criSocket: string }>;
}

export interface Installation {
  manager: { pid: number; log: string; healthPort: number; metricsPort: number; webhookPort: number };
  daemons: Array<{ node: string; pid: number; log: string; port: number }>;
}

// The project root, from the sources (tests) as from the build.
function projectRoot(): string {
  let d = import.meta.dirname;
  while (!existsSync(join(d, 'package.json')) && dirname(d) !== d) d = dirname(d);
  return d;
}
const root = projectRoot();

function offset(env: LocalEnv): number {
  return Number(env.registryOpen.split(':')[1]) - 5000;
}

function dir(env: LocalEnv): string {
  return join(env.envDir, 'kruise');
}

function start(args: string[], log: string): number {
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', out, out] });
  child.unref();
  return child.pid ?? 0;
}

export function managerArgs(env: LocalEnv, extra: string[] = []): string[] {
  const o = offset(env);
  return [
    join(root, 'dist', 'manager', 'main.js'),
    '--kubeconfig', env.kubeconfig,
    '--webhook-port', String(9876 + o),
    '--webhook-url', `https://127.0.0.1:${9876 + o}`,
    '--metrics-addr', `127.0.0.1:${18080 + o}`,
    '--health-probe-addr', `127.0.0.1:${18000 + o}`,
    '--nodeimage-creation-delay-seconds', '1',
    ...extra,
  ];
}

export function daemonArgs(env: LocalEnv, i: number): string[] {
  const n = env.nodes[i];
  if (!n) throw new Error(`no node ${i}`);
  return [
    // The DaemonSet's V8 setting (deploy/): a small young generation keeps RSS low.
    '--max-semi-space-size=1',
    join(root, 'dist', 'daemon', 'main.js'),
    '--node-name', n.name,
    '--kubeconfig', env.kubeconfig,
    '--runtime-endpoint', `unix://${n.criSocket}`,
    '--addr', `127.0.0.1:${10231 + offset(env) + 10 * i}`,
    '--status-write-interval-seconds', '1',
  ];
}

async function waitHttp(url: string, pid: number, log: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (!alive || Date.now() > deadline) {
      throw new Error(`${url} not ready (${alive ? 'timeout' : 'process exited'}); log ${log}:\n${existsSync(log) ? readFileSync(log, 'utf8').slice(-3000) : ''}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function ensureNamespaces(rest: RestClient, names: string[]): Promise<void> {
  const ns = new Resource<KubeObject>(rest, core.namespaces);
  for (const name of names) {
    try {
      await ns.create({ metadata: { name } });
    } catch (err) {
      if (!(err instanceof ApiError && err.alreadyExists)) throw err;
    }
  }
}

/** Starts a kruise-manager process with `args` and waits until it is ready. */
export async function startManager(args: string[], log: string, healthPort: number): Promise<number> {
  const pid = start(args, log);
  await waitHttp(`http://127.0.0.1:${healthPort}/readyz`, pid, log);
  return pid;
}

/**
 * Replaces the installation's kruise-manager with a new process on the same ports (stopping the old
 * one if it still runs), and records it for `down`.
 */
export async function restartManager(env: LocalEnv): Promise<Installation> {
  const file = join(dir(env), 'installation.json');
  const inst = JSON.parse(readFileSync(file, 'utf8')) as Installation;
  await stopPid(inst.manager.pid);
  inst.manager.pid = await startManager(managerArgs(env), inst.manager.log, inst.manager.healthPort);
  writeFileSync(file, JSON.stringify(inst, null, 2));
  return inst;
}

export async function up(env: LocalEnv): Promise<Installation> {
  mkdirSync(dir(env), { recursive: true });
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    await ensureNamespaces(rest, ['kruise-system', 'kruise-daemon-config']);
  } finally {
    await rest.close();
  }
  const o = offset(env);
  const mlog = join(dir(env), 'manager.log');
  const mpid = await startManager(managerArgs(env), mlog, 18000 + o);
  const daemons = env.nodes.map((n, i) => {
    const log = join(dir(env), `daemon-${n.name}.log`);
    return { node: n.name, pid: start(daemonArgs(env, i), log), log, port: 10231 + o + 10 * i };
  });
  for (const d of daemons) await waitHttp(`http://127.0.0.1:${d.port}/readyz`, d.pid, d.log);
  const inst: Installation = { manager: { pid: mpid, log: mlog, healthPort: 18000 + o, metricsPort: 18080 + o, webhookPort: 9876 + o }, daemons };
  writeFileSync(join(dir(env), 'installation.json'), JSON.stringify(inst, null, 2));
  return inst;
}

export async function stopPid(pid: number, graceMs = 10_000): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function down(env: LocalEnv): Promise<void> {
  const file = join(dir(env), 'installation.json');
  if (existsSync(file)) {
    const inst = JSON.parse(readFileSync(file, 'utf8')) as Installation;
    await Promise.all([...inst.daemons.map((d) => stopPid(d.pid)), stopPid(inst.manager.pid)]);
    rmSync(file);
  }
  // Without its manager the webhook would refuse every write of the kinds it covers.
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    for (const [plural, name] of [
      ['mutatingwebhookconfigurations', MUTATING_CONFIGURATION],
      ['validatingwebhookconfigurations', VALIDATING_CONFIGURATION],
    ] as const) {
      await rest.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${plural}/${name}`).catch(() => undefined);
    }
  } finally {
    await rest.close();
  }
}

if (process.argv[1]?.endsWith('kruise.js')) {
  const [verb, envFile] = process.argv.slice(2);
  const env = JSON.parse(readFileSync(envFile ?? '', 'utf8')) as LocalEnv;
  if (verb === 'up') {
    const inst = await up(env);
    console.log(`kruise-manager pid ${inst.manager.pid} (webhook :${inst.manager.webhookPort}), daemons: ${inst.daemons.map((d) => `${d.node} pid ${d.pid}`).join(', ')}`);
  } else if (verb === 'down') {
    await down(env);
  } else {
    console.error('usage: node dist/hack/kruise.js up|down ENV_JSON');
    process.exitCode = 2;
  }
}
