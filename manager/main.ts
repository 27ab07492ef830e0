#!/usr/bin/env node
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { accessRecorder, observers } from '../kube/access-log.js';
import { MANAGER_USER_AGENT } from '../api/installation.js';
import { FlagError, helpText, parseFlags } from '../kube/flags.js';
import { serveOps } from '../kube/httpserver.js';
import type { KruiseApi } from '../kube/kruise.js';
import { errorFields, rootLogger, type LogLevel } from '../kube/log.js';
import { loadManagerClusterAccess } from '../kube/kubeconfig.js';
import { ApiError, RestClient } from '../kube/rest.js';
import { startupKruiseApi } from '../kube/startup.js';
import { version } from '../kube/version.js';
import { Manager } from './manager.js';
import { ManagerMetrics } from './metrics.js';
import { managerFlags } from './options.js';

async function main(): Promise<number> {
  let flags;
  try {
    flags = parseFlags(managerFlags, process.argv.slice(2));
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`kruise-manager: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText('kruise-manager', 'the kruise-ts controllers and admission webhook', managerFlags));
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`kruise-manager ${version()}\n`);
    return 0;
  }
  const log = rootLogger(flags.logLevel as LogLevel).child({ component: 'manager' });
  const metrics = new ManagerMetrics();
  let rest: RestClient;
  let api: KruiseApi;
  try {
    const access = await loadManagerClusterAccess(flags.kubeconfig);
    const accessLog = accessRecorder('manager');
    rest = new RestClient(access, {
      qps: flags.qps,
      burst: flags.burst,
      userAgent: `${MANAGER_USER_AGENT}/${version()}`,
      observe: observers((verb, resource, code) => metrics.apiRequests.inc({ verb, resource, code: String(code) }), accessLog?.observe),
      ...(accessLog ? { observeIntent: accessLog.observeIntent } : {}),
    });
    api = await startupKruiseApi(rest, ['nodeImages', 'imagePullJobs', 'imageListPullJobs', 'crrs']);
  } catch (err) {
    log.error(err instanceof Error ? err.message : String(err), errorFields(err));
    return 1;
  }
  // The pod's name where the Deployment gives it: replicas on the host network share a hostname.
  const identity = `${process.env['POD_NAME'] || hostname()}_${randomBytes(4).toString('hex')}`;
  const manager = new Manager({ rest, kruise: api, flags, metrics, identity, logger: log });
  const servers: Server[] = [];
  const closeServers = (): void => {
    for (const s of servers) {
      s.close();
      s.closeAllConnections();
    }
  };
  try {
    servers.push(await serveOps(flags.metricsAddr, metrics.registry, { ready: [] }));
    servers.push(
      await serveOps(flags.healthAddr, metrics.registry, {
        ready: [
          { name: 'manager', check: () => assertReady(manager.unready()) },
          { name: 'openkruise', check: () => manager.openKruiseConflicts() },
        ],
      }),
    );
    await manager.startWebhook();
  } catch (err) {
    log.error(`cannot start: ${(err as Error).message}${startHint(err, flags.namespace)}`, errorFields(err));
    closeServers();
    await manager.stop();
    await rest.close();
    return 1;
  }
  log.info('started', { version: version(), identity, leaderElection: flags.leaderElection });
  const outcome = await Promise.race([
    manager.runControllers(),
    new Promise<'signal'>((resolve) => {
      process.once('SIGTERM', () => resolve('signal'));
      process.once('SIGINT', () => resolve('signal'));
    }),
  ]);
  const hardStop = setTimeout(() => {
    log.error('shutdown took too long, exiting');
    process.exit(1);
  }, 10_000);
  hardStop.unref();
  await manager.stop();
  closeServers();
  await rest.close();
  log.info('stopped', { outcome });
  return 0;
}

/** What to do about the usual start-up failures. */
function startHint(err: unknown, namespace: string): string {
  if (err instanceof ApiError && err.notFound && /namespaces? .*not found/.test(err.message)) {
    return ` (namespace ${namespace} does not exist: install kruise-ts with kubectl apply -k deploy/, or point --namespace at the namespace it runs in)`;
  }
  if (err instanceof ApiError && err.forbidden) return ' (the manager\'s ServiceAccount lacks a permission: apply deploy/base/rbac.yaml)';
  return '';
}

function assertReady(problem: string | undefined): void {
  if (problem !== undefined) throw new Error(problem);
}

const code = await main();
process.exitCode = code;
// A failed start must end the process even if some handle lingers.
if (code !== 0) setTimeout(() => process.exit(code), 1000).unref();
