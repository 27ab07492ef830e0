import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RestClient } from '../../kube/rest.js';
import { clusterEnv, createNamespace, deleteNamespace, restClient } from './kube.js';

/**
 * Stops the environment's real kube-apiserver (every client then meets refused connections) and, `downMs` after it stopped, starts it again with the same command line and PID
 * file (hack/lib/cluster.sh), as a node upgrade or a crash-looping control plane would. Resolves
 * with the moment it served a list again.
 */
export async function apiServerOutage(
  downMs: number,
  duringOutage: () => Promise<void> = async () => undefined,
  /** Who must be served again for the server to count as back (default: the admin). */
  as: RestClient = restClient(),
  path = '/api/v1/namespaces?limit=1',
): Promise<{ stoppedAt: number; backAt: number }> {
  const kube = join(clusterEnv().envDir, 'kube');
  const pidFile = join(kube, 'pids', 'kube-apiserver.pid');
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  // SIGKILL, as a crash: on SIGTERM the server stops listening at once but drains its watches for
  // up to a minute before it exits, which would stretch the outage past what the test asks for.
  process.kill(pid, 'SIGKILL');
  while (existsSync(`/proc/${pid}`)) await new Promise((r) => setTimeout(r, 50));
  const stoppedAt = Date.now();
  await duringOutage();
  await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + downMs - Date.now())));
  const log = openSync(join(kube, 'logs', 'kube-apiserver.log'), 'a');
  const [cmd, ...args] = argv;
  const child = spawn(cmd ?? '', args, { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  child.unref();
  writeFileSync(pidFile, String(child.pid));
  const rest = as;
  try {
    for (;;) {
      // Served from etcd and past authorization: the server is back for that client, not just
      // listening (a fresh server refuses ServiceAccounts for seconds while its RBAC cache fills).
      const ok = await rest.request('GET', path).then(
        () => true,
        () => false,
      );
      if (ok) return { stoppedAt, backAt: Date.now() };
      if (child.exitCode !== null) throw new Error(`kube-apiserver exited with ${child.exitCode} on restart (log: ${join(kube, 'logs', 'kube-apiserver.log')})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await rest.close();
  }
}

/**
 * Resolves once kube-controller-manager works again after an outage: a new namespace gets its
 * default ServiceAccount and token. Its reflectors back off up to 30 s with a jitter factor of 1
 * (client-go's reflector), so it may lag the API server's return by a minute, and the next test's
 * namespace must not pay for this one's outage.
 */
export async function controllerManagerCaughtUp(timeoutMs = 120_000): Promise<void> {
  const rest = restClient();
  try {
    const ns = await createNamespace(rest, 'after-outage', timeoutMs);
    await deleteNamespace(rest, ns);
  } finally {
    await rest.close();
  }
}
