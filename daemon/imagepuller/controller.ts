import pLimit from 'p-limit';
import {
  EVENT_TYPE_NORMAL,
  EVENT_TYPE_WARNING,
  REASON_IMAGE_FILESYSTEM_FREED,
  REASON_IMAGE_FILESYSTEM_FULL,
  REASON_OPENKRUISE_CONFLICT,
  REASON_PULL_IMAGE_FAILED,
  REASON_PULL_IMAGE_SUCCEED,
} from '../../api/events.js';
import { CONDITION_IMAGE_FILESYSTEM_FULL } from '../../api/metadata-keys.js';
import { MESSAGE_PULL_DEADLINE_EXCEEDED } from '../../api/messages.js';
import { tagEndMs } from '../../api/nodeimage.js';
import type { Condition } from '../../api/types/common.js';
import { KIND_IMAGE_PULL_JOB } from '../../api/group-version.js';
import { formatTime } from '../../api/time.js';
import type { ImageTagSpec, NodeImage } from '../../api/types/nodeimage.js';
import { eventTarget, referenceTarget, type EventRecorder, type EventTarget } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import { componentLogger, errorFields, type Logger } from '../../kube/log.js';
import type { Resource, ResourceType } from '../../kube/resource.js';
import { WorkQueue } from '../../kube/workqueue.js';
import type { CriClient } from '../cri/client.js';
import { joinNameTag } from '../../api/image-reference.js';
import { credentialsFor } from './credentials.js';
import type { DaemonMetrics } from '../metrics.js';
import { planPulls, type PullPlan } from './plan.js';
import type { ProgressPoller } from './progress.js';
import type { RegistryHosts } from './registryhosts.js';
import type { SecretSource } from './secrets.js';
import { isFinal, tagKey, type DesiredTag, type TagState } from './state.js';
import { buildStatus } from './status.js';
import { StatusWriter } from './statuswriter.js';
import { runPull, SharedPulls, type PullOutcome } from './worker.js';
import { foreignStatusWriters, newWrites } from './writers.js';

/** setTimeout's longest delay; a tag ending later than that is never queued that long. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long another status writer must have been quiet before this daemon writes again. */
const CONFLICT_QUIET_MS = 120_000;

export interface ImagePullerOptions {
  node: string;
  cri: CriClient;
  nodeImages: Resource<NodeImage>;
  /** ImagePullJobs as the cluster serves them, for events on the owners of failed tags. */
  jobType: ResourceType;
  informer: Informer<NodeImage>;
  secrets: SecretSource;
  events: EventRecorder;
  metrics: DaemonMetrics;
  diskCheck: () => Promise<string | undefined>;
  progress?: ProgressPoller | undefined;
  /** Where containerd reads a registry's manifests, for byte progress behind mirrors and private CAs. */
  registryHosts?: ((registry: string) => RegistryHosts) | undefined;
  maxWorkers: number;
  statusMinIntervalMs?: number | undefined;
  backoffBaseMs?: number | undefined;
  conflictQuietMs?: number | undefined;
  logger?: Logger;
}

interface Running {
  version: number;
  abort: AbortController;
}

/**
 * The image puller: makes this node hold what its NodeImage asks for. One reconcile key (the node);
 * each reconcile plans against the cached NodeImage, starts and stops pulls in a node-wide worker
 * pool, and hands the resulting status to the coalescing status writer.
 */
export class ImagePuller {
  private readonly states = new Map<string, TagState>();
  private readonly running = new Map<string, Running>();
  private readonly pool: ReturnType<typeof pLimit>;
  private readonly queue: WorkQueue;
  private readonly writer: StatusWriter;
  private readonly log: Logger;
  private readonly shared: SharedPulls;
  private stopped = false;
  /** Other status writers and their last write, as last seen; the first sight is the baseline. */
  private writersSeen: Map<string, string> | undefined;
  private standBack: { until: number; writers: string[] } | undefined;
  /** The ImageFilesystemFull condition once a pull has looked at the disk. */
  private diskCondition: Condition | undefined;

  constructor(private readonly deps: ImagePullerOptions) {
    this.shared = new SharedPulls(deps.cri);
    this.log = deps.logger ?? componentLogger('imagepuller');
    this.pool = pLimit(deps.maxWorkers);
    this.queue = new WorkQueue({
      name: 'imagepuller',
      concurrency: 1,
      backoffBaseMs: 500,
      backoffMaxMs: 50_000,
      retryDelayMs: (ms) => deps.nodeImages.rest.retryDelayMs(ms),
      logger: this.log,
      metrics: { depth: (n) => deps.metrics.queueDepth.set({ queue: 'imagepuller' }, n) },
    });
    this.writer = new StatusWriter(deps.nodeImages, deps.informer, deps.node, (ni) => buildStatus(ni.spec, this.states, ni.status, this.conditions(ni)), {
      logger: this.log,
      minIntervalMs: deps.statusMinIntervalMs,
      onWrite: (result) => deps.metrics.statusWrites.inc({ resource: 'nodeimages/status', result }),
      busy: () => this.running.size > 0,
    });
    deps.informer.on({
      add: (ni) => {
        this.noticeWriters(ni);
        this.queue.add(deps.node);
      },
      // Status-only updates (our own writes among them) change nothing to plan.
      update: (a, b) => {
        this.noticeWriters(b);
        if (JSON.stringify(a.spec) !== JSON.stringify(b.spec)) this.queue.add(deps.node);
      },
      delete: () => this.queue.add(deps.node),
    });
  }

  start(): void {
    this.queue.start(() => this.reconcile());
  }

  /** Stops taking work, cancels pulls in flight (they resume after a restart) and writes the status. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.queue.shutdown();
    for (const r of this.running.values()) r.abort.abort();
    this.pool.clearQueue();
    await this.writer.flush();
    this.writer.stop();
  }

  /** Why this puller stands back, while it does: another daemon writes this node's status. */
  standingBack(): string | undefined {
    if (!this.standBack || Date.now() >= this.standBack.until) return undefined;
    return `${this.standBack.writers.join(', ')} also writes NodeImage ${this.deps.node}'s status (OpenKruise's kruise-daemon?): kruise-ts's daemon stands back until it has been quiet for ${Math.round(this.quietMs() / 1000)} s`;
  }

  private quietMs(): number {
    return this.deps.conflictQuietMs ?? CONFLICT_QUIET_MS;
  }

  /**
   * Two daemons writing one NodeImage status would overwrite each other's results for ever: when
   * another writer writes while this daemon runs, it stops starting pulls and writing status until
   * that writer has been quiet for a while, and says so (log, event, /readyz).
   */
  private noticeWriters(ni: NodeImage): void {
    const now = foreignStatusWriters(ni);
    const seen = this.writersSeen;
    this.writersSeen = now;
    if (seen === undefined) return;
    const writers = newWrites(seen, now);
    if (writers.length === 0) return;
    const until = Date.now() + this.quietMs();
    if (this.standBack === undefined || Date.now() >= this.standBack.until) {
      this.log.warn('another daemon writes this NodeImage status: standing back', { nodeImage: this.deps.node, writers });
      this.deps.events.event(eventTarget(this.deps.nodeImages.type, ni), EVENT_TYPE_WARNING, REASON_OPENKRUISE_CONFLICT, `${writers.join(', ')} also writes this NodeImage's status: kruise-ts's daemon stands back until it stops`);
    }
    this.standBack = { until, writers };
    this.writer.holdUntil(until);
    // Level-triggered: once the hold is over, look again (and, if nobody wrote meanwhile, resume).
    this.queue.addAfter(this.deps.node, this.quietMs() + 100);
  }

  /** The daemon's conditions, replacing its condition types in what is stored. */
  private conditions(ni: NodeImage): Condition[] | undefined {
    if (this.diskCondition === undefined) return undefined;
    return [...(ni.status?.conditions ?? []).filter((c) => c.type !== CONDITION_IMAGE_FILESYSTEM_FULL), this.diskCondition];
  }

  /**
   * Pulls wait while the image filesystem is above the watermark: the NodeImage says so with a
   * condition and an event when that starts and ends, not once per waiting tag.
   */
  private diskWait(refusal: string | undefined): void {
    const ni = this.deps.informer.get(this.deps.node);
    // After a restart the stored condition is where this daemon left off.
    const prev = this.diskCondition ?? ni?.status?.conditions?.find((c) => c.type === CONDITION_IMAGE_FILESYSTEM_FULL);
    const full = refusal !== undefined;
    const message = refusal ?? 'pulls go on';
    // A node whose disk was never full carries no condition at all.
    if (prev === undefined && !full) return;
    const changed = prev === undefined || (prev.status === 'True') !== full;
    if (!changed && prev.message === message && this.diskCondition !== undefined) return;
    this.diskCondition = {
      type: CONDITION_IMAGE_FILESYSTEM_FULL,
      status: full ? 'True' : 'False',
      reason: full ? 'AboveHighWatermark' : 'BelowHighWatermark',
      message,
      lastTransitionTime: changed ? formatTime(new Date()) : prev.lastTransitionTime,
    };
    if (changed && ni !== undefined) {
      const target = eventTarget(this.deps.nodeImages.type, ni);
      if (full) {
        this.log.warn('pulls wait for disk space', { nodeImage: this.deps.node, reason: refusal });
        this.deps.events.event(target, EVENT_TYPE_WARNING, REASON_IMAGE_FILESYSTEM_FULL, `pulls wait for disk space: ${refusal}`);
      } else {
        this.log.info('disk space is back: pulls go on', { nodeImage: this.deps.node });
        this.deps.events.event(target, EVENT_TYPE_NORMAL, REASON_IMAGE_FILESYSTEM_FREED, 'the image filesystem is below the high watermark again: pulls go on');
      }
    }
    this.writer.markDirty('result');
  }

  /** For tests: what the puller holds in memory. */
  snapshot(): TagState[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  private async reconcile(): Promise<void> {
    const ni = this.deps.informer.get(this.deps.node);
    if (!ni) {
      // Not created yet, or deleted with its Node: nothing to pull, nothing to report.
      for (const r of this.running.values()) r.abort.abort();
      this.running.clear();
      this.states.clear();
      return;
    }
    if (this.standingBack() !== undefined) return;
    if (this.standBack !== undefined) {
      this.log.info('the other status writer has been quiet: resuming', { nodeImage: this.deps.node, writers: this.standBack.writers });
      this.standBack = undefined;
    }
    const runningVersions = new Map([...this.running].map(([k, r]) => [k, r.version]));
    const plan = planPulls(ni.spec, ni.status, runningVersions, this.states);
    this.apply(plan, ni);
  }

  private apply(plan: PullPlan, ni: NodeImage): void {
    const wanted = new Set(plan.desired.map((d) => d.key));
    for (const key of plan.cancel) {
      this.running.get(key)?.abort.abort();
      this.running.delete(key);
    }
    for (const key of [...this.states.keys()]) if (!wanted.has(key)) this.states.delete(key);
    for (const s of plan.adopt) this.states.set(tagKey(s.image, s.tag), s);
    for (const d of plan.start) this.startPull(d, ni);
    this.deps.metrics.pullsWaiting.set(this.pool.pendingCount);
    this.writer.markDirty(plan.adopt.length > 0 || plan.cancel.length > 0 ? 'result' : plan.start.length > 0 ? 'started' : 'progress');
  }

  private startPull(d: DesiredTag, ni: NodeImage): void {
    const abort = new AbortController();
    const run: Running = { version: d.version, abort };
    this.running.set(d.key, run);
    const state: TagState = { image: d.image, tag: d.tag, version: d.version, phase: 'Waiting', progress: 0 };
    this.states.set(d.key, state);
    const current = (): boolean => this.running.get(d.key) === run && !this.stopped;
    const log = this.log.child({ nodeImage: this.deps.node, image: d.image, tag: d.tag, version: d.version });
    const endMs = tagEndMs(d.spec);
    // A tag queued behind busy workers until its end fails then, as the manager would fail it.
    const queuedTooLong =
      endMs === undefined || endMs - Date.now() > MAX_TIMER_MS
        ? undefined
        : setTimeout(() => {
            if (!current() || state.phase !== 'Waiting') return;
            abort.abort();
            this.finish(d, state, { phase: 'Failed', message: MESSAGE_PULL_DEADLINE_EXCEEDED, reason: 'deadline', attempts: 0 }, 0, ni, log);
          }, Math.max(0, endMs - Date.now()));
    queuedTooLong?.unref();
    void this.pool(async () => {
      clearTimeout(queuedTooLong);
      if (!current()) return;
      this.deps.metrics.pullsInFlight.inc();
      this.deps.metrics.pullsWaiting.set(this.pool.pendingCount);
      const t0 = Date.now();
      let outcome: PullOutcome | undefined;
      try {
        log.info('pulling');
        outcome = await runPull(
          {
            image: d.image,
            tag: d.tag,
            version: d.version,
            ref: joinNameTag(d.image, d.tag),
            ...pullPolicyOf(d.spec),
            ...(d.imageSpec.sandboxConfig ? { sandboxConfig: d.imageSpec.sandboxConfig } : {}),
            ...(endMs !== undefined ? { endMs } : {}),
            currentPolicy: () => {
              const now = this.deps.informer.get(this.deps.node)?.spec?.images?.[d.image]?.tags?.find((t) => t.tag === d.tag && (t.version ?? 0) === d.version);
              return pullPolicyOf(now ?? d.spec);
            },
          },
          {
            cri: this.deps.cri,
            shared: this.shared,
            progress: this.deps.progress,
            registryHosts: this.deps.registryHosts,
            diskCheck: this.deps.diskCheck,
            onDiskWait: (refusal) => this.diskWait(refusal),
            auths: async () => credentialsFor(joinNameTag(d.image, d.tag), await this.deps.secrets.keyring(d.imageSpec.pullSecrets ?? [])),
            backoffBaseMs: this.deps.backoffBaseMs,
          },
          (patch) => {
            if (!current()) return;
            Object.assign(state, patch);
            this.writer.markDirty(patch.phase === undefined ? 'progress' : patch.phase === 'Pulling' ? 'started' : 'result');
          },
          abort.signal,
        );
      } catch (err) {
        outcome = { phase: 'Failed', message: `unexpected error: ${(err as Error).message}`, reason: 'other', attempts: 0 };
        log.error('pull crashed', errorFields(err));
      } finally {
        this.deps.metrics.pullsInFlight.dec();
      }
      // A stopped pull (tag removed, version bumped, shutdown) records nothing and tells no one.
      if (!outcome || !current()) return;
      this.finish(d, state, outcome, (Date.now() - t0) / 1000, ni, log);
    });
  }

  private finish(d: DesiredTag, state: TagState, outcome: PullOutcome, seconds: number, ni: NodeImage, log: Logger): void {
    this.running.delete(d.key);
    delete state.message;
    state.phase = outcome.phase;
    state.completionTime = formatTime(new Date());
    if (outcome.phase === 'Succeeded') {
      state.progress = 100;
      if (outcome.imageID) state.imageID = outcome.imageID;
      const pulled = (bytes: number): void => {
        this.deps.metrics.pullBytes.inc(bytes);
        log.info('pulled', { seconds: Number(seconds.toFixed(3)), bytes, attempts: outcome.attempts });
      };
      const ref = outcome.pulledRef;
      if (ref === undefined) pulled(0);
      else
        void this.deps.cri.image('ImageStatus', { image: { image: ref } }).then(
          (st) => pulled(Number(st.image?.size ?? 0)),
          () => pulled(0),
        );
      this.deps.events.event(eventTarget(this.deps.nodeImages.type, ni), EVENT_TYPE_NORMAL, REASON_PULL_IMAGE_SUCCEED, `Image ${d.image}:${d.tag}, elapsedTime ${seconds.toFixed(3)}s`);
    } else {
      if (outcome.message) state.message = outcome.message;
      log.warn('pull failed', { reason: outcome.reason, attempts: outcome.attempts, error: outcome.message });
      const text = `Image ${d.image}:${d.tag} failed to pull: ${outcome.message ?? 'unknown error'}`;
      this.deps.events.event(eventTarget(this.deps.nodeImages.type, ni), EVENT_TYPE_WARNING, REASON_PULL_IMAGE_FAILED, text);
      for (const owner of ownersOf(d.spec, this.deps.jobType)) this.deps.events.event(owner, EVENT_TYPE_WARNING, REASON_PULL_IMAGE_FAILED, text);
    }
    this.deps.metrics.pulls.inc({ result: outcome.phase, reason: outcome.reason ?? '' });
    this.deps.metrics.pullDuration.observe({ result: outcome.phase }, seconds);
    if (isFinal(state.phase)) this.writer.markDirty('result');
  }
}

function pullPolicyOf(t: ImageTagSpec): { timeoutSeconds?: number; backoffLimit?: number; activeDeadlineSeconds?: number; imagePullPolicy?: 'Always' | 'IfNotPresent' } {
  const p = t.pullPolicy ?? {};
  return {
    ...(p.timeoutSeconds !== undefined ? { timeoutSeconds: p.timeoutSeconds } : {}),
    ...(p.backoffLimit !== undefined ? { backoffLimit: p.backoffLimit } : {}),
    ...(p.activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds: p.activeDeadlineSeconds } : {}),
    ...(t.imagePullPolicy ? { imagePullPolicy: t.imagePullPolicy } : {}),
  };
}

function ownersOf(t: ImageTagSpec, jobType: ResourceType): EventTarget[] {
  return (t.ownerReferences ?? [])
    .filter((o) => o.kind === KIND_IMAGE_PULL_JOB && o.name)
    .map((o) => referenceTarget(jobType, o));
}
