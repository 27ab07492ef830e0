import { join } from 'node:path';
import type { Secret } from '../api/types/core.js';
import type { ContainerRecreateRequest } from '../api/types/containerrecreaterequest.js';
import type { NodeImage } from '../api/types/nodeimage.js';
import { EVENT_SOURCE_DAEMON_CRR, EVENT_SOURCE_DAEMON_IMAGE_PULLER } from '../api/events.js';
import { EventRecorder } from '../kube/events.js';
import { Informer } from '../kube/informer.js';
import type { KruiseApi } from '../kube/kruise.js';
import { componentLogger, type Logger } from '../kube/log.js';
import type { RestClient } from '../kube/rest.js';
import { core, Resource } from '../kube/resource.js';
import type { CriClient } from './cri/client.js';
import { CrrExecutor, crrSelector } from './crr/controller.js';
import { ImagePuller } from './imagepuller/controller.js';
import { DiskGuard } from './imagepuller/diskguard.js';
import { ProgressPoller } from './imagepuller/progress.js';
import { registryHosts } from './imagepuller/registryhosts.js';
import { SecretSource } from './imagepuller/secrets.js';
import { DaemonMetrics } from './metrics.js';

export interface DaemonConfig {
  node: string;
  rest: RestClient;
  /** The OpenKruise kinds in the versions the cluster serves (kube/startup.ts). */
  kruise: KruiseApi;
  cri: CriClient;
  secretNamespace: string;
  maxWorkers: number;
  /** Pods whose ContainerRecreateRequests run at once (default 32). */
  maxWorkersForCrr?: number;
  imageFsHighWatermark: number;
  hostRoot: string;
  statusIntervalMs: number;
  metrics?: DaemonMetrics;
  /** Byte progress from containerd's content API (off for runtimes without it). */
  progress?: boolean;
  /**
   * containerd's registry host configuration folders (its config_path) as the host sees them, read
   * under hostRoot: byte progress reads manifests through the same mirrors and CAs. None: the
   * registry itself.
   */
  registryConfigPath?: readonly string[];
  /** Retry backoff start for pulls (1 s in production). */
  pullBackoffBaseMs?: number;
  /** How long the puller stands back after another daemon last wrote its NodeImage status (2 min). */
  conflictQuietMs?: number;
  logger?: Logger;
}

/**
 * A daemon's two watches (its NodeImage, its node's CRRs) each last 10 to 20 minutes: at rest a node
 * makes under one watch request in 5 minutes (0.67 on average), where client-go's 5 to 10 minutes
 * would make 1.33, so 6,700 requests in 5 minutes from 5,000 nodes; bookmarks (every minute) keep the
 * resourceVersion a watch resumes from fresh. Their lists come from the API server's watch cache,
 * so after the server ends a watch early, a version 5 s old or older is renewed by such a list (one
 * lookup) rather than resumed, which would replay every NodeImage event since (kube/informer.ts).
 */
const OWN_NODE_WATCH = { minWatchTimeoutSeconds: 600, listFromWatchCache: true, refreshVersionAfterMs: 5_000 } as const;

/**
 * The node agent's parts wired together, without flags or servers, so the binary, the tests and
 * the scale simulation run the same code.
 */
export class Daemon {
  readonly metrics: DaemonMetrics;
  readonly nodeImageInformer: Informer<NodeImage>;
  readonly puller: ImagePuller;
  readonly crrInformer: Informer<ContainerRecreateRequest>;
  readonly crr: CrrExecutor;
  private readonly stopSignal = new AbortController();

  constructor(readonly config: DaemonConfig) {
    this.metrics = config.metrics ?? new DaemonMetrics();
    const log = config.logger ?? componentLogger('daemon');
    const nodeImages = new Resource<NodeImage>(config.rest, config.kruise.nodeImages);
    // Only this node's NodeImage: one watch, never a cluster-wide list. Its managedFields tell
    // whether another daemon writes its status too.
    this.nodeImageInformer = new Informer<NodeImage>(nodeImages, { fieldSelector: `metadata.name=${config.node}`, keepManagedFields: true, logger: log, ...OWN_NODE_WATCH });
    const guard = new DiskGuard(config.cri, config.imageFsHighWatermark, config.hostRoot);
    const recorder = (component: string): EventRecorder =>
      new EventRecorder(config.rest, { component, host: config.node }, { onResult: (result) => this.metrics.events.inc({ result }) });
    this.puller = new ImagePuller({
      node: config.node,
      cri: config.cri,
      nodeImages,
      jobType: config.kruise.imagePullJobs,
      informer: this.nodeImageInformer,
      secrets: new SecretSource(new Resource<Secret>(config.rest, core.secrets), config.secretNamespace),
      events: recorder(EVENT_SOURCE_DAEMON_IMAGE_PULLER),
      metrics: this.metrics,
      diskCheck: () => guard.check(),
      progress: config.progress === false ? undefined : new ProgressPoller(config.cri),
      registryHosts: (registry) => registryHosts(registry, (config.registryConfigPath ?? []).map((d) => join(config.hostRoot, d)), config.hostRoot),
      maxWorkers: config.maxWorkers,
      statusMinIntervalMs: config.statusIntervalMs,
      backoffBaseMs: config.pullBackoffBaseMs,
      conflictQuietMs: config.conflictQuietMs,
      logger: log.child({ component: 'imagepuller' }),
    });
    const crrs = new Resource<ContainerRecreateRequest>(config.rest, config.kruise.crrs);
    // The daemon's second and last watch: this node's active CRRs, never the whole cluster's.
    this.crrInformer = new Informer<ContainerRecreateRequest>(crrs, { labelSelector: crrSelector(config.node), logger: log, ...OWN_NODE_WATCH });
    this.crr = new CrrExecutor({
      node: config.node,
      cri: config.cri,
      crrs,
      informer: this.crrInformer,
      events: recorder(EVENT_SOURCE_DAEMON_CRR),
      metrics: this.metrics,
      maxWorkers: config.maxWorkersForCrr ?? 32,
      logger: log.child({ component: 'crr' }),
    });
  }

  start(): void {
    void this.nodeImageInformer.run(this.stopSignal.signal);
    void this.crrInformer.run(this.stopSignal.signal);
    this.puller.start();
    this.crr.start();
  }

  synced(): boolean {
    return this.nodeImageInformer.hasSynced() && this.crrInformer.hasSynced();
  }

  /** Why the puller stands back (another daemon writes this node's NodeImage status), if it does. */
  standingBack(): string | undefined {
    return this.puller.standingBack();
  }

  /** Stops taking work, cancels what runs (a restart resumes it) and flushes status writes. */
  async stop(): Promise<void> {
    await Promise.all([this.puller.stop(), this.crr.stop()]);
    this.stopSignal.abort();
  }
}
