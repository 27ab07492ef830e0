import { CRR_PHASE_FAILED, CRR_PHASE_PENDING } from '../../api/enums.js';
import { LABEL_CRR_ACTIVE, LABEL_CRR_ACTIVE_VALUE, LABEL_CRR_NODE_NAME, LABEL_CRR_POD_UID } from '../../api/metadata-keys.js';
import type { ContainerRecreateRequest, ContainerRecreateRequestStatus } from '../../api/types/containerrecreaterequest.js';
import type { EventRecorder } from '../../kube/events.js';
import type { Index, Informer } from '../../kube/informer.js';
import { componentLogger, type Logger } from '../../kube/log.js';
import { newerResourceVersion } from '../../kube/resource-version.js';
import { ApiError } from '../../kube/rest.js';
import type { Priority } from '../../kube/ratelimit.js';
import { objectKey, type Resource } from '../../kube/resource.js';
import { WorkQueue, type Result } from '../../kube/workqueue.js';
import type { CriClient } from '../cri/client.js';
import type { DaemonMetrics } from '../metrics.js';
import { killContainer } from './kill.js';
import { RuntimeLooks } from './looks.js';
import { observeContainers, podAddress } from './observe.js';
import { pickCrr } from './pick.js';
import { applyKillResults, planCrr, RECREATING_RECHECK_MS, sameStatus, splitContainerID, type Plan } from './step.js';
import { crrStopGraceSeconds } from '../../api/crr-status.js';

const crrsByPod: Index<ContainerRecreateRequest> = { name: 'pod', keys: (crr) => [podKeyOf(crr)] };

/** The daemon's CRR watch: only CRRs the webhook bound to this node and that are still active. */
export function crrSelector(node: string): string {
  return `${LABEL_CRR_NODE_NAME}=${node},${LABEL_CRR_ACTIVE}=${LABEL_CRR_ACTIVE_VALUE}`;
}

/** The work-queue key of a CRR: its pod, so that one pod's CRRs never run at once. */
function podKeyOf(crr: ContainerRecreateRequest): string {
  return `${crr.metadata?.namespace ?? ''}/${crr.spec.podName}`;
}

export interface CrrExecutorOptions {
  node: string;
  cri: CriClient;
  crrs: Resource<ContainerRecreateRequest>;
  informer: Informer<ContainerRecreateRequest>;
  events: EventRecorder;
  metrics: DaemonMetrics;
  /** Pods whose CRRs run at once. */
  maxWorkers: number;
  logger?: Logger;
}

// Plans per reconcile before yielding the worker; each one persisted a change, so this only bounds
// a pod with many CRRs finishing one after another.
const MAX_PLANS_PER_RECONCILE = 64;

/** How long, beyond the grace period, an instance the runtime said it stopped may still show as running. */
const STOPPED_INSTANCE_WAIT_MS = 30_000;

/**
 * Executes this node's ContainerRecreateRequests. The queue key is the pod: a reconcile picks the
 * pod's CRR whose turn it is and drives it as far as it can go right now (persisting every step
 * before acting on it; an ordinary stop's record goes out beside the stop), then goes on with the next CRR of the pod as soon as one completes.
 */
export class CrrExecutor {
  private readonly queue: WorkQueue;
  private readonly log: Logger;
  private readonly stopping = new AbortController();
  /** Our own last write of each CRR: newer than the cache until the watch delivers it. */
  private readonly written = new Map<string, ContainerRecreateRequest>();
  /** When the daemon first saw each CRR, for the stop-latency metric. */
  private readonly firstSeen = new Map<string, number>();
  private readonly looks = new RuntimeLooks();
  /** Container IDs whose StopContainer this process saw succeed, until when they are not stopped again. */
  private readonly stopped = new Map<string, number>();
  private runtimeName: string | undefined;

  constructor(private readonly deps: CrrExecutorOptions) {
    this.log = deps.logger ?? componentLogger('crr');
    this.queue = new WorkQueue({
      name: 'crr',
      concurrency: deps.maxWorkers,
      backoffBaseMs: 500,
      backoffMaxMs: 50_000,
      retryDelayMs: (ms) => deps.crrs.rest.retryDelayMs(ms),
      logger: this.log,
      metrics: { depth: (n) => deps.metrics.queueDepth.set({ queue: 'crr' }, n) },
    });
    deps.informer.addIndex(crrsByPod);
    // Every change of any CRR of a pod, its disappearance included (completed CRRs lose the active
    // label and leave the watch), lets the pod's next CRR start at once.
    deps.informer.on({
      add: (crr) => {
        if (!this.firstSeen.has(objectKey(crr))) this.firstSeen.set(objectKey(crr), Date.now());
        this.queue.add(podKeyOf(crr));
      },
      update: (_old, crr) => this.queue.add(podKeyOf(crr)),
      delete: (crr) => {
        this.written.delete(objectKey(crr));
        this.firstSeen.delete(objectKey(crr));
        this.looks.forget(objectKey(crr));
        this.queue.add(podKeyOf(crr));
      },
    });
  }

  start(): void {
    this.queue.start((key) => this.reconcile(key));
    // Status writes that failed during an API server outage go out as soon as it answers again.
    const unsubscribe = this.deps.crrs.rest.onServerBack(() => this.queue.retryFailedNow());
    this.stopping.signal.addEventListener('abort', unsubscribe, { once: true });
  }

  /** Stops taking work; stops in flight are cancelled, and a restarted daemon finishes them. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.queue.shutdown();
  }

  private get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** The cache's copy, or our own later write when the cache has not caught up with it yet. */
  private freshest(crr: ContainerRecreateRequest): ContainerRecreateRequest {
    const key = objectKey(crr);
    const mine = this.written.get(key);
    if (mine === undefined) return crr;
    if (newerResourceVersion(mine.metadata?.resourceVersion, crr.metadata?.resourceVersion)) return mine;
    this.written.delete(key);
    return crr;
  }

  private async runtime(): Promise<string> {
    if (this.runtimeName === undefined) {
      const v = await this.deps.cri.runtime('Version', { version: 'v1' }, { timeoutMs: 10_000 });
      this.runtimeName = v.runtime_name;
    }
    return this.runtimeName;
  }

  private async reconcile(podKey: string): Promise<Result | void> {
    for (let i = 0; i < MAX_PLANS_PER_RECONCILE && !this.signal.aborted; i++) {
      const crrs = this.deps.informer.byIndex(crrsByPod, podKey).map((c) => this.freshest(c));
      const { current, toPending } = pickCrr(crrs);
      for (const waiting of toPending) await this.write(waiting, { ...waiting.status, phase: CRR_PHASE_PENDING });
      if (current === undefined) return;
      const next = await this.drive(current);
      if (next !== 'again') return next;
    }
    return this.signal.aborted ? undefined : { requeueAfterMs: 0 };
  }

  /** One plan for one CRR, carried out; 'again' when something was persisted. */
  private async drive(crr: ContainerRecreateRequest): Promise<'again' | Result | undefined> {
    const key = objectKey(crr);
    const log = this.log.child({ crr: key, pod: podKeyOf(crr), node: this.deps.node });
    const runtimeName = await this.runtime();
    let plan: Plan = planCrr({ crr, runtimeName, nowMs: Date.now() });
    const resourceVersion = crr.metadata?.resourceVersion ?? '';
    if (plan.type === 'observe') {
      const pendingMs = this.looks.pendingMs(key, resourceVersion, Date.now());
      if (pendingMs !== undefined) return { requeueAfterMs: pendingMs };
      const originals = new Map(crr.spec.containers.map((c) => [c.name, splitContainerID(c.statusContext?.containerID ?? '')?.id ?? '']));
      const startTimes = (crr.spec.strategy?.minStartedSeconds ?? 0) > 0;
      const containers = await observeContainers(this.deps.cri, podUidOf(crr), originals, { startTimes, signal: this.signal });
      plan = planCrr({ crr, runtimeName, nowMs: Date.now(), containers });
      this.looks.planned(key, resourceVersion, plan, Date.now());
    }
    switch (plan.type) {
      case 'observe':
        return undefined;
      case 'wait':
        log.debug('waiting', { reason: plan.reason });
        return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
      case 'write':
        log.debug('status', { reason: plan.reason, phase: plan.status.phase });
        return (await this.write(crr, plan.status)) === undefined ? undefined : 'again';
      case 'complete': {
        if ((await this.write(crr, plan.status)) === undefined) return undefined;
        const failed = (plan.status.containerRecreateStates ?? []).filter((s) => s.phase === CRR_PHASE_FAILED).map((s) => s.name);
        this.deps.metrics.crrs.inc({ result: failed.length === 0 ? 'succeeded' : 'failed' });
        log.info('completed', { message: plan.status.message, failed: failed.length > 0 ? failed : undefined });
        return 'again';
      }
      case 'kill':
        return this.kill(crr, plan, log);
    }
  }

  private async kill(crr: ContainerRecreateRequest, plan: Extract<Plan, { type: 'kill' }>, log: Logger): Promise<'again' | Result | undefined> {
    // A runtime that said an instance stopped can still list it as running for a while (a stop it
    // gave up on the caller's deadline goes on inside; containerd then answers the next StopContainer
    // at once): that instance is left to finish instead of being stopped again and again.
    const now = Date.now();
    const kills = plan.kills.filter((t) => (this.stopped.get(t.containerId) ?? 0) <= now);
    if (kills.length === 0) {
      log.debug('waiting for the runtime to show the stopped container exited', { containers: plan.kills.map((t) => t.name) });
      return { requeueAfterMs: RECREATING_RECHECK_MS };
    }
    // The status records the stop (the instance, when it began) ahead of every other call under the
    // daemon's API budget. A daemon restarted after the stop must never stop the container that
    // replaced it: the replacement has a new ID, unlike the instance the CRR names in statusContext,
    // so the stop need not wait for the record, and 25 CRRs on a node stop at once instead of in the
    // budget's 5 writes a second. forceRecreate stops a new instance as well: there only the record,
    // written first, tells a restarted daemon that its stop was done.
    const recording: Promise<{ stored?: ContainerRecreateRequest | undefined; failed?: unknown }> = this.write(crr, plan.status, 'high').then(
      (stored) => ({ stored }),
      (error: unknown) => ({ failed: error ?? new Error('status write failed') }),
    );
    if (crr.spec.strategy?.forceRecreate === true) {
      const first = await recording;
      if (first.failed !== undefined) throw first.failed;
      if (first.stored === undefined) return undefined;
    }
    const pod = { name: crr.spec.podName, namespace: crr.metadata?.namespace ?? '', uid: podUidOf(crr) };
    let address: Promise<string> | undefined;
    const seen = this.firstSeen.get(objectKey(crr));
    const unreadyMs = (crr.spec.strategy?.unreadyGracePeriodSeconds ?? 0) * 1000;
    const results = new Map<string, string | undefined>();
    await Promise.all(
      kills.map(async (t) => {
        const error = await killContainer(t, {
          cri: this.deps.cri,
          events: this.deps.events,
          pod,
          crrName: crr.metadata?.name ?? '',
          podAddress: () => (address ??= podAddress(this.deps.cri, pod.uid, this.signal)),
          log: log.child({ container: t.name }),
          signal: this.signal,
          seenAtMs: seen,
          beforeStop: (preStopMs) => {
            if (seen !== undefined) this.deps.metrics.crrStopLatency.observe(Math.max(0, Date.now() - seen - preStopMs - unreadyMs) / 1000);
          },
        });
        this.deps.metrics.crrStops.inc({ result: error === undefined ? 'ok' : 'error' });
        if (error === undefined) this.rememberStop(t.containerId, Date.now() + crrStopGraceSeconds(crr) * 1000 + STOPPED_INSTANCE_WAIT_MS);
        if (error !== undefined && !this.signal.aborted) log.warn('cannot stop container', { container: t.name, error });
        results.set(t.name, error);
      }),
    );
    const recorded = await recording;
    // Cancelled by shutdown: the recorded stop lets the next daemon finish it.
    if (this.signal.aborted) return undefined;
    if (recorded.failed !== undefined) throw recorded.failed;
    // Stale copy or gone: the CRR was re-queued with the fresh one, whose plan sees what the stop did.
    const intended = recorded.stored;
    if (intended === undefined) return undefined;
    const status: ContainerRecreateRequestStatus = applyKillResults(intended.status ?? plan.status, results);
    if (!sameStatus(intended.status, status)) await this.write(intended, status);
    return 'again';
  }

  private rememberStop(containerId: string, until: number): void {
    const now = Date.now();
    for (const [id, end] of this.stopped) if (end < now) this.stopped.delete(id);
    this.stopped.set(containerId, until);
  }

  /**
   * Writes the status with the copy's resourceVersion; returns the stored object, or undefined
   * when the copy was stale (the fresh one is remembered and the pod re-queued) or the CRR is gone.
   */
  private async write(crr: ContainerRecreateRequest, status: ContainerRecreateRequestStatus, priority?: Priority): Promise<ContainerRecreateRequest | undefined> {
    const key = objectKey(crr);
    this.deps.crrs.mayGet(crr.metadata?.namespace, crr.metadata?.name ?? '');
    try {
      const stored = await this.deps.crrs.updateStatus({ ...crr, status }, priority);
      this.written.set(key, stored);
      return stored;
    } catch (err) {
      if (!(err instanceof ApiError) || !(err.conflict || err.objectNotFound)) throw new Error(`cannot write the status of ${key}`, { cause: err });
      if (err.conflict) {
        const fresh = await this.deps.crrs.get(crr.metadata?.namespace, crr.metadata?.name ?? '').catch(() => undefined);
        if (fresh !== undefined) this.written.set(key, fresh);
        this.queue.add(podKeyOf(crr));
      }
      return undefined;
    }
  }
}

function podUidOf(crr: ContainerRecreateRequest): string {
  return crr.metadata?.labels?.[LABEL_CRR_POD_UID] ?? '';
}
