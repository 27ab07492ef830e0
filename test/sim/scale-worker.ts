// One worker process of the scale simulation (test/sim/scale.ts forks several, so no single event
// loop bounds 5,000 daemons): it runs the real daemon code for its share of the simulated nodes
// against the real API server, with a simulated runtime, and answers the coordinator's questions
// about what its daemons did. Messages: start → synced, stats → stats, stop → stopped.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE } from '../../api/installation.js';
import { CriClient } from '../../daemon/cri/client.js';
import { Daemon } from '../../daemon/daemon.js';
import { DaemonMetrics } from '../../daemon/metrics.js';
import { loadClusterAccess } from '../../kube/kubeconfig.js';
import { discoverKruise } from '../../kube/kruise.js';
import { rootLogger } from '../../kube/log.js';
import { RestClient, type Query, type WatchEvent } from '../../kube/rest.js';
import { rssMiB } from '../../hack/bench/proc.js';
import { FakeRuntime } from './fake-runtime.js';

export interface WatchEnds {
  /** The server ended the watch at (or near) the timeout the client asked for. */
  timeout: number;
  /** The server ended it well before that (a closed unresponsive watcher, a restart). */
  early: number;
  /** It failed (an error status, a broken stream). */
  error: number;
}

/** When a simulated node first had an image in its spec, and first saw its tag Succeeded (ms since epoch). */
export interface ImageTimes {
  nodes: number;
  seenFirst: number;
  seenLast: number;
  done: number;
  doneLast: number;
}

export interface WorkerStats {
  nodes: number;
  requests: Record<string, number>;
  openWatches: number;
  peakOpenWatches: number;
  watchEnds: WatchEnds;
  /** Informer lists and re-lists after a 410, summed over the worker's daemons. */
  lists: number;
  relistsAfterGone: number;
  /** Short watches asked for to get a bookmark's newer resourceVersion (kube/informer.ts). */
  refreshWatches: number;
  /** Lists from the watch cache renewing an ageing resourceVersion after an early end. */
  refreshLists: number;
  rssMiB: number;
  images: Record<string, ImageTimes>;
  /** Daemons whose NodeImage still names an image in its spec or status. */
  holding: number;
}

export type ToWorker = { type: 'start'; envKubeconfig: string; names: string[]; pullDelayMs: number } | { type: 'stats' } | { type: 'stop' };
export type FromWorker = { type: 'synced'; baseRssMiB: number } | { type: 'stats'; stats: WorkerStats } | { type: 'stopped' };

const send = (m: FromWorker): void => {
  process.send?.(m);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
rootLogger('error');

const requests = new Map<string, number>();
const ends: WatchEnds = { timeout: 0, early: 0, error: 0 };

/** Counts open watches and how each ended. */
class WatchCountingRestClient extends RestClient {
  openWatches = 0;
  peakOpen = 0;

  override async watch<T>(path: string, query: Query, onEvent: (ev: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    this.openWatches++;
    this.peakOpen = Math.max(this.peakOpen, this.openWatches);
    const started = Date.now();
    const asked = Number(query['timeoutSeconds'] ?? 0) * 1000;
    try {
      await super.watch(path, query, onEvent, signal);
      if (!signal.aborted) {
        if (asked > 0 && Date.now() - started >= asked - 2000) ends.timeout++;
        else ends.early++;
      }
    } catch (err) {
      if (!signal.aborted) ends.error++;
      throw err;
    } finally {
      this.openWatches--;
    }
  }
}

let daemons: Daemon[] = [];
let rest: WatchCountingRestClient | undefined;
let cri: CriClient | undefined;
let runtime: FakeRuntime | undefined;
const images = new Map<string, ImageTimes>();

function track(ni: NodeImage, seen: Map<string, boolean>): void {
  const now = Date.now();
  for (const name of Object.keys(ni.spec?.images ?? {})) {
    const key = `seen ${name}`;
    if (seen.has(key)) continue;
    seen.set(key, true);
    const t = images.get(name) ?? { nodes: 0, seenFirst: now, seenLast: now, done: 0, doneLast: 0 };
    t.nodes++;
    t.seenLast = now;
    images.set(name, t);
  }
  for (const [name, st] of Object.entries(ni.status?.imageStatuses ?? {})) {
    const key = `done ${name}`;
    if (seen.has(key) || !st.tags?.some((x) => x.phase === 'Succeeded')) continue;
    seen.set(key, true);
    const t = images.get(name);
    if (!t) continue;
    t.done++;
    t.doneLast = now;
  }
}

async function start(m: Extract<ToWorker, { type: 'start' }>): Promise<void> {
  const access = loadClusterAccess(m.envKubeconfig);
  const admin = new RestClient(access, { qps: 0 });
  const { api: kruise } = await discoverKruise(admin);
  await admin.close();
  rest = new WatchCountingRestClient(access, {
    qps: 0,
    observe: (verb, resource) => requests.set(`${verb} ${resource}`, (requests.get(`${verb} ${resource}`) ?? 0) + 1),
  });
  const socket = join(tmpdir(), `kruise-ts-sim-${process.pid}.sock`);
  process.on('exit', () => rmSync(socket, { force: true }));
  runtime = await FakeRuntime.start({ socket, pullDelayMs: m.pullDelayMs });
  cri = new CriClient(socket);
  const metrics = new DaemonMetrics();
  const baseRssMiB = rssMiB('self');
  const r = rest;
  const c = cri;
  daemons = m.names.map((node) => {
    const d = new Daemon({ node, rest: r, kruise, cri: c, secretNamespace: DEFAULT_DAEMON_CONFIG_NAMESPACE, maxWorkers: 5, imageFsHighWatermark: 100, hostRoot: '/', statusIntervalMs: 5000, metrics, progress: false });
    const seen = new Map<string, boolean>();
    d.nodeImageInformer.on({ add: (ni) => track(ni, seen), update: (_a, b) => track(b, seen) });
    return d;
  });
  for (const d of daemons) d.start();
  while (!daemons.every((d) => d.synced())) await sleep(200);
  send({ type: 'synced', baseRssMiB });
}

function stats(): WorkerStats {
  let lists = 0;
  let relistsAfterGone = 0;
  let refreshWatches = 0;
  let refreshLists = 0;
  for (const d of daemons) {
    for (const inf of [d.nodeImageInformer, d.crrInformer]) {
      lists += inf.stats.lists;
      relistsAfterGone += inf.stats.relistsAfterGone;
      refreshWatches += inf.stats.refreshWatches;
      refreshLists += inf.stats.refreshLists;
    }
  }
  return {
    nodes: daemons.length,
    requests: Object.fromEntries(requests),
    openWatches: rest?.openWatches ?? 0,
    peakOpenWatches: rest?.peakOpen ?? 0,
    watchEnds: { ...ends },
    lists,
    relistsAfterGone,
    refreshWatches,
    refreshLists,
    rssMiB: rssMiB('self'),
    images: Object.fromEntries(images),
    holding: daemons.filter((d) => d.nodeImageInformer.list().some((ni) => Object.keys({ ...ni.spec?.images, ...ni.status?.imageStatuses }).length > 0)).length,
  };
}

async function stop(): Promise<void> {
  for (const d of daemons) await d.stop();
  cri?.close();
  await runtime?.stop();
  await rest?.close();
  send({ type: 'stopped' });
  process.exit(0);
}

// A simulation that ends without stopping its workers (killed, crashed) closes their IPC channel:
// they must not live on, a thousand daemons each, against the next cluster on the same port.
process.on('disconnect', () => process.exit(1));
process.on('message', (m: ToWorker) => {
  const fail = (err: unknown): void => {
    console.error(err);
    process.exit(1);
  };
  if (m.type === 'start') start(m).catch(fail);
  else if (m.type === 'stats') send({ type: 'stats', stats: stats() });
  else stop().catch(fail);
});
