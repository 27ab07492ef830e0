#!/usr/bin/env node
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { DAEMON_USER_AGENT } from '../api/installation.js';
import { accessRecorder, observers } from '../kube/access-log.js';
import { loadClusterAccess } from '../kube/kubeconfig.js';
import { FlagError, helpText, parseFlags } from '../kube/flags.js';
import { serveOps } from '../kube/httpserver.js';
import type { KruiseApi } from '../kube/kruise.js';
import { errorFields, rootLogger, type LogLevel } from '../kube/log.js';
import { RestClient } from '../kube/rest.js';
import { startupKruiseApi } from '../kube/startup.js';
import { version } from '../kube/version.js';
import { CriClient } from './cri/client.js';
import { detectRuntime, socketAccepts } from './cri/endpoint.js';
import { Daemon } from './daemon.js';
import { DaemonMetrics } from './metrics.js';
import { daemonFlags, explicitEndpoint } from './options.js';

/** How long the runtime's socket may refuse connections before /healthz asks for a restart. */
const RUNTIME_GONE_MS = 30_000;

async function main(): Promise<number> {
  let flags;
  try {
    flags = parseFlags(daemonFlags, process.argv.slice(2));
  } catch (err) {
    if (err instanceof FlagError) {
      process.stderr.write(`kruise-daemon: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (flags.help) {
    process.stdout.write(helpText('kruise-daemon', 'the kruise-ts node agent (image pulls and container recreation)', daemonFlags));
    return 0;
  }
  if (flags.version) {
    process.stdout.write(`kruise-daemon ${version()}\n`);
    return 0;
  }
  const log = rootLogger(flags.logLevel as LogLevel).child({ component: 'daemon' });
  const node = flags.nodeName;
  if (node === '') {
    log.error('no node name: set NODE_NAME (the DaemonSet passes spec.nodeName through the downward API) or --node-name');
    return 1;
  }
  const metrics = new DaemonMetrics();
  let rest: RestClient;
  let cri: CriClient;
  let api: KruiseApi;
  let runtimeEndpoint = '';
  try {
    const accessLog = accessRecorder('daemon');
    rest = new RestClient(loadClusterAccess(flags.kubeconfig), {
      qps: flags.qps,
      burst: flags.burst,
      userAgent: `${DAEMON_USER_AGENT}/${version()} (${node})`,
      observe: observers((verb, resource, code) => metrics.apiRequests.inc({ verb, resource, code: String(code) }), accessLog?.observe),
      ...(accessLog ? { observeIntent: accessLog.observeIntent } : {}),
    });
    const endpoint = explicitEndpoint(flags.runtimeEndpoint, flags.socketFile, flags.hostRoot);
    const runtime = await detectRuntime({ endpoint: endpoint || undefined, hostRoot: flags.hostRoot });
    log.info('container runtime found', { node, endpoint: runtime.endpoint, runtime: `${runtime.runtimeName} ${runtime.runtimeVersion}` });
    if (runtime.alsoFound.length > 0) {
      log.warn('more than one container runtime answers on this node: using the first found, which may not be the one the kubelet uses; set --runtime-endpoint to choose', {
        node,
        endpoint: runtime.endpoint,
        alsoFound: runtime.alsoFound,
      });
    }
    runtimeEndpoint = runtime.endpoint;
    cri = new CriClient(runtime.endpoint, { onCall: (method, result) => metrics.criRequests.inc({ method, result }) });
    api = await startupKruiseApi(rest, ['nodeImages', 'crrs']);
  } catch (err) {
    log.error(err instanceof Error ? err.message : String(err), errorFields(err));
    return 1;
  }

  const daemon = new Daemon({
    node,
    rest,
    kruise: api,
    cri,
    secretNamespace: flags.secretNamespace,
    maxWorkers: flags.maxWorkers,
    maxWorkersForCrr: flags.maxWorkersForCrr,
    imageFsHighWatermark: flags.imageFsHighWatermark,
    hostRoot: flags.hostRoot,
    registryConfigPath: flags.registryConfigPath.split(':').filter((d) => d !== ''),
    statusIntervalMs: flags.statusInterval * 1000,
    metrics,
    logger: log,
  });
  let server;
  try {
    // Alive while the runtime's socket took a new connection within RUNTIME_GONE_MS: a daemon
    // whose runtime socket is gone is restarted by its liveness probe, and finds it again on start.
    let socketSeenAt = Date.now();
    server = await serveOps(flags.addr, metrics.registry, {
      ready: [
        { name: 'nodeImageInformerSynced', check: () => assertSynced(daemon.nodeImageInformer.hasSynced()) },
        { name: 'crrInformerSynced', check: () => assertSynced(daemon.crrInformer.hasSynced()) },
        { name: 'soleStatusWriter', check: () => assertAlone(daemon.standingBack()) },
        { name: 'containerRuntime', check: async () => void (await cri.runtime('Version', { version: 'v1' }, { timeoutMs: 2000, waitForReady: false })) },
      ],
      live: [
        {
          name: 'containerRuntimeSocket',
          check: async () => {
            if (await socketAccepts(runtimeEndpoint, 2000)) socketSeenAt = Date.now();
            else if (Date.now() - socketSeenAt > RUNTIME_GONE_MS) throw new Error(`${runtimeEndpoint} has taken no connection for ${Math.round((Date.now() - socketSeenAt) / 1000)} s`);
          },
        },
      ],
    });
  } catch (err) {
    log.error((err as Error).message, errorFields(err));
    return 1;
  }
  daemon.start();
  const port = (server.address() as AddressInfo | null)?.port;
  log.info('started', { node, version: version(), host: hostname(), addr: flags.addr, port, maxWorkers: flags.maxWorkers, maxWorkersForCrr: flags.maxWorkersForCrr });

  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  log.info('stopping: finishing status writes');
  const hardStop = setTimeout(() => {
    log.error('shutdown took too long, exiting');
    process.exit(1);
  }, 8_000);
  hardStop.unref();
  await daemon.stop();
  server.close();
  server.closeAllConnections();
  cri.close();
  await rest.close();
  log.info('stopped');
  return 0;
}

function assertAlone(standingBack: string | undefined): void {
  if (standingBack !== undefined) throw new Error(standingBack);
}

function assertSynced(synced: boolean): void {
  if (!synced) throw new Error('not synced');
}

process.exitCode = await main();
