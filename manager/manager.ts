import type { Server } from 'node:https';
import type { Controller } from '../kube/controller.js';
import { EventRecorder } from '../kube/events.js';
import { InformerFactory } from '../kube/informers.js';
import { Interner } from '../kube/intern.js';
import type { KruiseApi } from '../kube/kruise.js';
import { LeaderElector, type Lease } from '../kube/leader.js';
import { componentLogger, errorFields, type Logger } from '../kube/log.js';
import type { RestClient } from '../kube/rest.js';
import { core, Resource } from '../kube/resource.js';
import type { ControllerContext, ControllerFactory, ManagerFlags } from './context.js';
import { controllerFactories } from './controllers.js';
import { MANAGER_SHEDDING_BACKOFF_MAX_MS, SharedInformers } from './informers.js';
import type { ManagerMetrics } from './metrics.js';
import { ensureCerts } from './webhook/certs.js';
import { injectWebhookConfigurations, type WebhookTarget } from './webhook/configurations.js';
import { injectCrrConversion } from './webhook/crd-conversion.js';
import { OpenKruiseWatch } from './openkruise/watch.js';
import { DEFAULT_MANAGER_DEPLOYMENT, MANAGER_USER_AGENT } from '../api/installation.js';
import { admissionHandlers } from './webhook/handlers.js';
import { serveWebhook } from './webhook/server.js';

export interface ManagerOptions {
  rest: RestClient;
  kruise: KruiseApi;
  flags: ManagerFlags;
  metrics: ManagerMetrics;
  identity: string;
  logger?: Logger;
  /** The controllers to run (default: all of controllers.ts). */
  factories?: ControllerFactory[];
}

const WEBHOOK_RESYNC_MS = 60_000;

/**
 * kruise-manager's parts: the admission webhook (every replica), and behind leader election the
 * shared informers and the controllers.
 */
export class Manager {
  private readonly log: Logger;
  private webhook: Server | undefined;
  private controllers: Controller[] = [];
  private informers: InformerFactory | undefined;
  private readonly stopAll = new AbortController();
  private electionDone: Promise<'stopped'> | undefined;
  private stopping: Promise<void> = Promise.resolve();
  private conversion: 'configured' | 'none' | 'no-crd' | undefined;
  private readonly openKruise: OpenKruiseWatch;

  constructor(private readonly deps: ManagerOptions) {
    this.log = deps.logger ?? componentLogger('manager');
    // What failed during an API server outage is retried as soon as it answers again.
    deps.rest.onServerBack(() => {
      for (const c of this.controllers) c.retryFailedNow();
    });
    const f = deps.flags;
    this.openKruise = new OpenKruiseWatch(
      deps.rest,
      f.openkruiseNamespace,
      new EventRecorder(deps.rest, { component: MANAGER_USER_AGENT }, { onResult: (result) => deps.metrics.events.inc({ result }) }),
      { apiVersion: 'apps/v1', kind: 'Deployment', name: DEFAULT_MANAGER_DEPLOYMENT, namespace: f.namespace },
      this.log.child({ component: 'openkruise' }),
    );
  }

  /** Certificates, webhook server and its configurations; resolves once the webhook serves. */
  async startWebhook(): Promise<void> {
    const f = this.deps.flags;
    const service = `${f.webhookService}.${f.namespace}.svc`;
    const hosts = [service, `${service}.cluster.local`, `${f.webhookService}.${f.namespace}`, f.webhookService];
    let target: WebhookTarget = { service: { namespace: f.namespace, name: f.webhookService, port: 443 } };
    if (f.webhookUrl !== '') {
      target = { url: f.webhookUrl };
      hosts.unshift(new URL(f.webhookUrl).hostname);
    }
    await this.openKruise.start(this.stopAll.signal);
    const certs = await ensureCerts(this.deps.rest, f.namespace, f.webhookCertSecret, hosts);
    this.webhook = await serveWebhook({
      host: f.webhookHost || undefined,
      port: f.webhookPort,
      cert: certs.cert,
      key: certs.key,
      handlers: admissionHandlers(this.deps.rest, f.namespace),
      onReview: (path, allowed) => this.deps.metrics.webhookRequests.inc({ path, allowed: String(allowed) }),
      logger: this.log.child({ component: 'webhook' }),
    });
    await this.ensureWebhookTargets(target, certs.caCert);
    this.log.info('webhook serving', { port: f.webhookPort, target: 'url' in target ? target.url : `service ${target.service.namespace}/${target.service.name}` });
    // Level-triggered, like upstream's webhook controller (which resyncs every minute): a CRD
    // re-applied by an installer, or a configuration edited by hand, points back at this webhook.
    const keep = setInterval(() => {
      this.ensureWebhookTargets(target, certs.caCert).catch((err: unknown) => this.log.warn('cannot keep the webhook configurations', errorFields(err)));
    }, WEBHOOK_RESYNC_MS);
    keep.unref();
    this.stopAll.signal.addEventListener('abort', () => clearInterval(keep), { once: true });
  }

  private async ensureWebhookTargets(target: WebhookTarget, caCert: string): Promise<void> {
    await injectWebhookConfigurations(this.deps.rest, target, caCert, this.deps.flags.daemonOwnNodeWebhook);
    const conversion = await injectCrrConversion(this.deps.rest, target, caCert);
    if (conversion !== this.conversion) {
      this.conversion = conversion;
      if (conversion === 'none') this.log.info('the ContainerRecreateRequest CRD converts without a webhook (it serves one version, as OpenKruise v1.9 installs it)');
    }
  }

  /**
   * Campaigns for leadership (or leads at once without election) until stopped. Leadership lost
   * (an API server outage longer than the renew deadline) stops the controllers, drops their
   * queues, caches and expectations, and campaigns again in-process: nothing needs to exit, and
   * the next term starts from the cluster's state as a restarted process would.
   */
  runControllers(): Promise<'stopped'> {
    const f = this.deps.flags;
    if (!f.leaderElection) {
      void this.lead(this.stopAll.signal);
      this.electionDone = new Promise((r) => this.stopAll.signal.addEventListener('abort', () => r('stopped')));
      return this.electionDone;
    }
    this.electionDone = this.campaign();
    return this.electionDone;
  }

  private async campaign(): Promise<'stopped'> {
    const f = this.deps.flags;
    while (!this.stopAll.signal.aborted) {
      const elector = new LeaderElector(new Resource<Lease>(this.deps.rest, core.leases), {
        namespace: f.leaderElectionNamespace !== '' ? f.leaderElectionNamespace : f.namespace,
        name: f.leaderElectionId,
        identity: this.deps.identity,
        logger: this.log.child({ component: 'leader-election' }),
        onStartedLeading: (signal) => void this.lead(signal),
        onStoppedLeading: () => this.deps.metrics.leader.set(0),
        drain: () => this.stopControllers(),
      });
      if ((await elector.run(this.stopAll.signal)) === 'stopped') break;
      this.deps.metrics.leadershipLost.inc();
      this.log.warn('controllers stopped after leadership was lost: campaigning again');
    }
    return 'stopped';
  }

  /** Why this replica is not ready, or undefined when it is. */
  unready(): string | undefined {
    if (this.webhook === undefined) return 'the webhook is not serving yet';
    if (this.informers !== undefined && !this.informers.allSynced()) return 'caches not synced';
    return undefined;
  }

  /**
   * What OpenKruise beside kruise-ts still does of its work. The replica stays ready (its webhook
   * keeps answering); /readyz says it, and the leader's controllers stand back meanwhile.
   */
  openKruiseConflicts(): string | undefined {
    return this.openKruise.problem();
  }

  isLeading(): boolean {
    return this.informers !== undefined;
  }

  /**
   * While leading: runs the controllers, except while OpenKruise does the same work (its daemon or
   * its controllers for these kinds), when they stand back and wait it out in-process.
   */
  private async lead(signal: AbortSignal): Promise<void> {
    this.deps.metrics.leader.set(1);
    while (!signal.aborted) {
      await this.openKruise.until(false, signal);
      if (signal.aborted) return;
      const run = new AbortController();
      const stop = (): void => run.abort();
      signal.addEventListener('abort', stop, { once: true });
      await this.startControllers(run.signal);
      await this.openKruise.until(true, run.signal);
      signal.removeEventListener('abort', stop);
      run.abort();
      await this.stopControllers();
    }
  }

  private async startControllers(signal: AbortSignal): Promise<void> {
    // Thousands of NodeImages repeat the same owner references, policies and digests: cached once each.
    const interner = new Interner();
    const informers = new InformerFactory(this.deps.rest, this.log, { transform: (obj) => interner.intern(obj), sheddingBackoffMaxMs: MANAGER_SHEDDING_BACKOFF_MAX_MS });
    const ctx: ControllerContext = {
      rest: this.deps.rest,
      kruise: this.deps.kruise,
      informers: new SharedInformers(informers, this.deps.kruise),
      recorder: (component) => new EventRecorder(this.deps.rest, { component }, { onResult: (result) => this.deps.metrics.events.inc({ result }) }),
      flags: this.deps.flags,
      metrics: {
        reconciled: (controller, result, seconds) => {
          this.deps.metrics.reconciles.inc({ controller, result });
          this.deps.metrics.reconcileSeconds.observe({ controller }, seconds);
        },
        depth: (controller, n) => this.deps.metrics.queueDepth.set({ controller }, n),
      },
      logger: this.log,
    };
    const controllers: Controller[] = [];
    for (const factory of this.deps.factories ?? controllerFactories) {
      try {
        const c = await factory(ctx);
        if (c) controllers.push(c);
      } catch (err) {
        this.log.error('cannot build a controller', errorFields(err));
      }
    }
    informers.start(signal);
    await informers.waitForSync();
    if (signal.aborted) return;
    this.informers = informers;
    this.controllers = controllers;
    for (const c of controllers) c.start();
    this.log.info('controllers started', { controllers: controllers.map((c) => c.name) });
    signal.addEventListener('abort', () => void this.stopControllers(), { once: true });
  }

  /** Stops the running controllers; every caller waits for the same stop to finish. */
  private stopControllers(): Promise<void> {
    const cs = this.controllers;
    this.controllers = [];
    this.informers = undefined;
    if (cs.length > 0) this.stopping = Promise.all(cs.map((c) => c.stop())).then(() => undefined);
    return this.stopping;
  }

  /** Stops the controllers (releasing the lease) and the webhook. */
  async stop(): Promise<void> {
    this.stopAll.abort();
    await this.electionDone;
    await this.stopControllers();
    const webhook = this.webhook;
    if (!webhook) return;
    // close() waits for every connection, and the API server keeps its idle ones for minutes:
    // idle ones go now, requests in flight get a moment to finish.
    const closed = new Promise<void>((r) => webhook.close(() => r()));
    webhook.closeIdleConnections();
    const force = setTimeout(() => webhook.closeAllConnections(), 2000);
    await closed;
    clearTimeout(force);
  }
}
