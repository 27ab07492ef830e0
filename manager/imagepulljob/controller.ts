import type { Pod, Secret } from '../../api/types/core.js';
// The ImagePullJob controller (upstream pkg/controller/imagepulljob): turns a job into per-node desired state in NodeImages,
// at most `parallelism` nodes pulling at once, and reports the nodes' results in the job's status.
// Everything is read from the shared caches; a reconcile writes only the NodeImages whose desired
// state changes, and the job's status only when it changes.
import {
  EVENT_SOURCE_IMAGE_PULL_JOB_CONTROLLER,
  EVENT_TYPE_NORMAL,
  EVENT_TYPE_WARNING,
  REASON_IMAGE_PULL_JOB_COMPLETED,
  REASON_IMAGE_PULL_JOB_DEADLINE_EXCEEDED,
  REASON_INVALID_IMAGE,
  REASON_NODE_NOT_FOUND,
  REASON_PULL_IMAGE_FAILED,
  REASON_PULL_SECRET_NOT_FOUND,
} from '../../api/events.js';
import { jsonEqual } from '../../api/json-equal.js';
import { MAX_IMAGES_PER_NODE_IMAGE } from '../../api/limits.js';
import { jobCompletedEventMessage, jobDeadlineEventMessage, nodeImageFullMessage, nodeNotFoundMessage, pullSecretNotFoundMessage } from '../../api/messages.js';
import { FINALIZER_DELETION_PROTECTION } from '../../api/metadata-keys.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage, NodeImageSpec } from '../../api/types/nodeimage.js';
import { QueueController, type Controller } from '../../kube/controller.js';
import { eventTarget, type EventRecorder } from '../../kube/events.js';
import { ResourceVersionExpectations, versionToExpect } from '../../kube/expectations.js';
import type { Informer } from '../../kube/informer.js';
import { sameLabels, selectorMatches } from '../../kube/labels.js';
import { errorFields, type Logger } from '../../kube/log.js';
import { ApiError } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import type { Result } from '../../kube/workqueue.js';
import { deleteIfExists, updateWithRetry } from '../../kube/write.js';
import { WriteSlots } from '../../kube/write-slots.js';
import { CoalescedWrites } from '../../kube/coalesced-writes.js';
import { WrittenAhead } from '../../kube/written-ahead.js';
import { nodeImageSpecPatch } from '../nodeimage/spec-patch.js';
import type { ControllerContext } from '../context.js';
import { ACTIVE, activeJobs, isActiveJob, activeJobsByPullSecret, activePodSelectorJobsByNamespace, nodeImagesByOwnerUid, podsByNamespace, podsByNode } from '../informers.js';
import { isDeleting } from '../../api/object-meta.js';
import { timeMs } from '../../api/time.js';
import { applyJobTag, releaseJobTag } from './desired.js';
import { missingNamedNodes, selectNodes, selectsNodeImage, type NodeSource } from './nodes.js';
import { referencesOf } from './secrets.js';
import { PullSecretSync } from './secretsync.js';
import { nodeView, planJob, type NodeView } from './status.js';
import { jobKey, jobTarget, parallelismOf, type JobTarget, type TargetOptions } from './target.js';
import { gainedRoom, ownersToWake, progressOwners } from './wake.js';

const IMAGE_PULL_JOB_CONTROLLER = 'imagepulljob-controller';

/**
 * NodeImage writes the controller has in flight at once, all jobs together (taken in turn while
 * several jobs write): as many as bench:scale's plain client uses to find the API server's limit
 * (10, then 32 for one reconcile, took a 1,000-node fan-out past it), bounded so that any number of
 * workers stays far below the API server's default max-mutating-requests-inflight (200).
 */
const WRITES_IN_FLIGHT = 64;
/**
 * Nodes one reconcile starts at most; the rest go to the next one, once these are nearly written. A
 * job over 5,000 nodes dispatched in one reconcile held its worker for minutes: with more jobs than
 * workers (3, upstream's default), the others waited that long for a startTime. In chunks, a job
 * keeps at most this many writes queued, and jobs take turns at the shared write slots.
 */
const MAX_DISPATCH_PER_RECONCILE = 500;
/**
 * A job with more NodeImage writes than this in flight starts no more nodes; once they are down to
 * this many it plans its next chunk while they finish. Waiting for a 500-node chunk's last writes
 * left most slots idle for its slowest write, then for the status write and the next reconcile: over
 * a 5,000-node fan-out, 1.4–2.8 s with no write in flight and 15–22 s with fewer than 48
 * (BENCHMARKS.md, "the rounds' idle write slots"). Twice the slots: the next chunk's first writes are
 * queued before the slots run dry.
 *
 * A reconcile with more writes than this returns as soon as they are queued, not once they are down
 * to this many: waiting held a worker for each chunk, and with 50 jobs over 1,000 nodes at 3 workers
 * the last job's first status came 13.5 minutes in, and the jobs' status said 0 succeeded for 13
 * minutes while their nodes' pulls took a second.
 */
const TAIL_LEFT_RUNNING = 2 * WRITES_IN_FLIGHT;
/**
 * While a job's writes are out, it is looked at (its status written) at most this often: woken by
 * every NodeImage its writes land on, 50 such jobs would each plan over all their nodes and write a
 * status several times a second beside the writes that matter.
 */
const FANNING_OUT_STATUS_MS = 5000;
/** Events from NodeImages and pods are gathered this long, so a burst of them is one reconcile. */
const WAKE_BATCH_MS = 200;

type WriteKind = 'dispatch' | 'refresh' | 'release';

class ImagePullJobController {
  readonly queue: QueueController;
  private readonly jobs: Informer<ImagePullJob>;
  private readonly nodeImages: Informer<NodeImage>;
  private readonly pods: Informer<Pod>;
  private readonly api: Resource<ImagePullJob>;
  private readonly nodeImageApi: Resource<NodeImage>;
  private readonly secretSync: PullSecretSync;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;
  private readonly source: NodeSource;
  private readonly targetOptions: TargetOptions;
  /** NodeImage writes per job the cache has not shown yet. */
  private readonly writes = new ResourceVersionExpectations<WriteKind>();
  /** NodeImage writes per job not answered yet, some of them from a reconcile that has returned. */
  private readonly inFlight = new Map<string, Map<string, WriteKind>>();
  /** The writes a returned reconcile left running; leadership is handed on only after them. */
  private readonly tails = new Set<Promise<void>>();
  /** Per job, the first failure among the writes a returned reconcile left running. */
  private readonly tailFailures = new Map<string, Error>();
  /** Status writes per job the cache has not shown yet. */
  private readonly statusWrites = new ResourceVersionExpectations<undefined>();
  /** When each job fanning out (more than TAIL_LEFT_RUNNING writes in flight) was last planned. */
  private readonly fanOutLooks = new Map<string, number>();
  /** Warnings already given, so a Never job reconciled again and again does not repeat them. */
  private readonly warned = new Set<string>();
  private stopping = false;
  private readonly writeSlots = new WriteSlots(WRITES_IN_FLIGHT);
  /** Every job's changes to one NodeImage that wait at once go out in one write. */
  private readonly nodeImageWrites: CoalescedWrites<NodeImage>;

  constructor(ctx: ControllerContext) {
    this.log = ctx.logger.child({ controller: IMAGE_PULL_JOB_CONTROLLER });
    this.api = new Resource<ImagePullJob>(ctx.rest, ctx.kruise.imagePullJobs);
    this.nodeImageApi = new Resource<NodeImage>(ctx.rest, ctx.kruise.nodeImages);
    this.jobs = ctx.informers.imagePullJobs();
    this.nodeImages = ctx.informers.nodeImages();
    const ahead = new WrittenAhead<NodeImage>(this.nodeImages, (ni) => ni.metadata?.name ?? '');
    this.nodeImageWrites = new CoalescedWrites<NodeImage>(async (name, mutate) => {
      const initial = ahead.newest(name);
      const written = await updateWithRetry(this.nodeImageApi, undefined, name, mutate, { asPatch: nodeImageSpecPatch, ...(initial ? { initial } : {}) });
      ahead.written(written);
      return written;
    });
    this.pods = ctx.informers.pods();
    this.secretSync = new PullSecretSync(ctx.rest, ctx.informers.secrets(), ctx.flags.daemonConfigNamespace);
    this.targetOptions = { neverRepullSeconds: ctx.flags.neverRepullSeconds };
    this.recorder = ctx.recorder(EVENT_SOURCE_IMAGE_PULL_JOB_CONTROLLER);
    this.queue = new QueueController(IMAGE_PULL_JOB_CONTROLLER, ctx.flags.imagePullJobWorkers, (key) => this.reconcile(key), ctx.metrics, this.log);
    this.source = {
      nodeImage: (name) => this.nodeImages.get(name),
      nodeImages: () => this.nodeImages.list(),
      pods: (ns) => this.pods.byIndex(podsByNamespace, ns),
    };
    const q = this.queue.queue;
    const wake = (key: string): void => q.addAfter(key, WAKE_BATCH_MS);
    const progressMs = ctx.flags.jobProgressIntervalSeconds * 1000;

    this.jobs.on({
      add: (j) => q.add(jobKey(j)),
      update: (_a, b) => q.add(jobKey(b)),
      delete: (j) => {
        this.writes.forget(jobKey(j));
        this.statusWrites.forget(jobKey(j));
        q.add(jobKey(j));
      },
    });
    this.nodeImages.on({
      add: (ni) => this.activeJobsSelecting(ni).forEach(wake),
      delete: (ni) => this.activeJobsSelecting(ni).forEach(wake),
      update: (a, b) => {
        const keys = ownersToWake(a, b);
        if (!sameLabels(a.metadata?.labels, b.metadata?.labels) || isDeleting(a) !== isDeleting(b)) {
          for (const j of this.jobs.byIndex(activeJobs, ACTIVE)) if (!j.spec.podSelector && selectsNodeImage(j, a) !== selectsNodeImage(j, b)) keys.add(jobKey(j));
        }
        if (gainedRoom(a, b)) for (const k of this.activeJobsSelecting(b)) keys.add(k);
        // A finished job has nothing left to do on any node.
        const active = (k: string): boolean => {
          const job = this.jobs.get(k);
          return job !== undefined && isActiveJob(job);
        };
        for (const k of keys) if (active(k)) wake(k);
        // Byte progress only changes the job's message: at most one such write per job and interval,
        // since the queue keeps a key's earliest wake.
        if (progressMs > 0) for (const k of progressOwners(a, b)) if (!keys.has(k) && active(k)) q.addAfter(k, progressMs);
      },
    });
    this.pods.on({
      add: (p) => this.onPod(p, undefined).forEach(wake),
      update: (a, b) => {
        const moved =
          a.spec?.nodeName !== b.spec?.nodeName || !sameLabels(a.metadata?.labels, b.metadata?.labels) || a.status?.phase !== b.status?.phase || isDeleting(a) !== isDeleting(b);
        if (moved) this.onPod(b, a).forEach(wake);
      },
      delete: (p) => this.onPod(p, undefined).forEach(wake),
    });
    ctx.informers.secrets().on({
      add: (s) => this.onSecret(s).forEach((k) => q.add(k)),
      update: (a, b) => {
        if (!jsonEqual(a.data, b.data) || a.type !== b.type || !jsonEqual(a.metadata?.annotations, b.metadata?.annotations)) this.onSecret(b).forEach((k) => q.add(k));
      },
      delete: (s) => this.onSecret(s).forEach((k) => q.add(k)),
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.queue.stop();
    await Promise.all(this.tails);
  }

  /** Active jobs whose selection includes this NodeImage (podSelector jobs through pods on its node). */
  private activeJobsSelecting(ni: NodeImage): string[] {
    const node = ni.metadata?.name ?? '';
    const out: string[] = [];
    for (const job of this.jobs.byIndex(activeJobs, ACTIVE)) {
      const selector = job.spec.podSelector;
      if (selector) {
        const ns = job.metadata?.namespace;
        if (this.pods.byIndex(podsByNode, node).some((p) => p.metadata?.namespace === ns && selectorMatches(selector, p.metadata?.labels))) out.push(jobKey(job));
      } else if (selectsNodeImage(job, ni)) {
        out.push(jobKey(job));
      }
    }
    return out;
  }

  private onPod(pod: Pod, old: Pod | undefined): string[] {
    const ns = pod.metadata?.namespace ?? '';
    const out: string[] = [];
    for (const job of this.jobs.byIndex(activePodSelectorJobsByNamespace, ns)) {
      const selector = job.spec.podSelector;
      if (!selector) continue;
      if (selectorMatches(selector, pod.metadata?.labels) || (old && selectorMatches(selector, old.metadata?.labels))) out.push(jobKey(job));
    }
    return out;
  }

  /** A source secret changed (its jobs sync the copy) or a copy changed (its jobs restore it). */
  private onSecret(s: Secret): string[] {
    const ns = s.metadata?.namespace ?? '';
    const keys = new Set(this.jobs.byIndex(activeJobsByPullSecret, `${ns}/${s.metadata?.name ?? ''}`).map(jobKey));
    if (ns === this.secretSync.daemonNamespace) {
      for (const k of referencesOf(s)) {
        const job = this.jobs.get(k);
        if (job && isActiveJob(job)) keys.add(k);
      }
    }
    return [...keys];
  }

  private async reconcile(key: string): Promise<Result | void> {
    const job = this.jobs.get(key);
    if (!job) {
      this.writes.forget(key);
      this.statusWrites.forget(key);
      this.tailFailures.delete(key);
      this.fanOutLooks.delete(key);
      return;
    }
    const log = this.log.child({ imagePullJob: key });
    // Our own last status write is not in the cache yet: its event will bring the job back.
    if (this.statusWrites.pending(key, 'status', job.metadata?.resourceVersion)) return;
    if (isDeleting(job)) return this.finalize(job, log);
    if (job.status?.completionTime) {
      await this.finalize(job, log);
      return this.expire(job, log);
    }
    if (!(job.metadata?.finalizers ?? []).includes(FINALIZER_DELETION_PROTECTION)) {
      await updateWithRetry(this.api, job.metadata?.namespace, job.metadata?.name ?? '', (fresh) => {
        const finalizers = fresh.metadata?.finalizers ?? [];
        if (isDeleting(fresh) || finalizers.includes(FINALIZER_DELETION_PROTECTION)) return undefined;
        return { ...fresh, metadata: { ...fresh.metadata, finalizers: [...finalizers, FINALIZER_DELETION_PROTECTION] } };
      }, { initial: job });
      return;
    }
    const claimed = await this.secretSync.claim(job);
    for (const name of claimed.missing) this.warnOnce(job, `secret/${name}`, REASON_PULL_SECRET_NOT_FOUND, pullSecretNotFoundMessage(job.metadata?.namespace ?? '', name));
    const target = jobTarget(job, claimed.refs, this.api.apiVersion, this.targetOptions);
    if ('invalid' in target) {
      this.warnOnce(job, 'image', REASON_INVALID_IMAGE, target.invalid);
      return;
    }
    return this.sync(job, target, log);
  }

  private async sync(job: ImagePullJob, target: JobTarget, log: Logger): Promise<Result | void> {
    const key = target.key;
    // Failed writes of the last reconcile's tail fail this one, so the queue's backoff applies.
    const tailFailure = this.tailFailures.get(key);
    if (tailFailure) {
      this.tailFailures.delete(key);
      throw tailFailure;
    }
    const flying = this.inFlight.get(key);
    const fanningOut = (flying?.size ?? 0) > TAIL_LEFT_RUNNING;
    if (fanningOut) {
      const since = Date.now() - (this.fanOutLooks.get(key) ?? 0);
      // Its writes wake it when they are down to TAIL_LEFT_RUNNING; until then, only its status.
      if (since < FANNING_OUT_STATUS_MS) return { requeueAfterMs: FANNING_OUT_STATUS_MS - since };
      this.fanOutLooks.set(key, Date.now());
    } else {
      this.fanOutLooks.delete(key);
    }
    const selected = selectNodes(job, this.source);
    const blocked = new Set<string>();
    const views: NodeView[] = selected.map((ni) => {
      const name = ni.metadata?.name ?? '';
      const pending = flying?.get(name) ?? this.writes.pending(key, name, ni.metadata?.resourceVersion)?.meta;
      if (!pending) return nodeView(ni, target);
      blocked.add(name);
      // What we dispatched there is pulling, whatever the stale cache still says.
      return pending === 'dispatch' ? { name, state: 'active', stale: false } : nodeView(ni, target);
    });
    views.push(...missingNamedNodes(job, this.source).map((name): NodeView => ({ name, state: 'missing', stale: false })));
    const plan = planJob(job, views, parallelismOf(job), Date.now(), fanningOut ? 0 : MAX_DISPATCH_PER_RECONCILE);
    const selectedNames = new Set(selected.map((ni) => ni.metadata?.name ?? ''));
    const release = this.nodeImages
      .byIndex(nodeImagesByOwnerUid, target.uid)
      .map((ni) => ni.metadata?.name ?? '')
      .filter((n) => !selectedNames.has(n) && !flying?.has(n) && !this.writes.pending(key, n, this.nodeImages.get(n)?.metadata?.resourceVersion));
    const todo: Array<[string, WriteKind]> = [
      ...plan.dispatch.map((n): [string, WriteKind] => [n, 'dispatch']),
      ...(plan.completed || fanningOut ? [] : plan.refresh.filter((n) => !blocked.has(n)).map((n): [string, WriteKind] => [n, 'refresh'])),
      ...(plan.completed || fanningOut ? [] : release.map((n): [string, WriteKind] => [n, 'release'])),
    ];
    const unwritten = await this.writeNodeImages(job, target, todo, log);
    for (const node of plan.full) this.warnOnce(job, `full/${node}`, REASON_PULL_IMAGE_FAILED, nodeImageFullMessage(node, target.image, MAX_IMAGES_PER_NODE_IMAGE));
    for (const node of plan.missing) this.warnOnce(job, `missing/${node}`, REASON_NODE_NOT_FOUND, nodeNotFoundMessage(node));
    if (this.stopping) return;

    if (!jsonEqual(plan.status, job.status)) {
      try {
        const written = await this.api.updateStatus({ ...job, status: plan.status });
        this.statusWrites.expect(key, 'status', written.metadata?.resourceVersion, undefined);
      } catch (err) {
        // Someone else changed the job since it was read: its event runs this reconcile again.
        if (err instanceof ApiError && (err.conflict || err.objectNotFound)) return;
        throw err;
      }
      if (plan.deadlineExceeded) {
        const unfinished = (plan.status.failed ?? 0) - views.filter((v) => v.state === 'failed' || v.state === 'full').length;
        this.recorder.event(eventTarget(this.api.type, job), EVENT_TYPE_WARNING, REASON_IMAGE_PULL_JOB_DEADLINE_EXCEEDED, jobDeadlineEventMessage(job.spec.completionPolicy?.activeDeadlineSeconds ?? 0, unfinished));
        log.info('job exceeded its deadline', { failed: plan.status.failed, succeeded: plan.status.succeeded });
      } else if (plan.completed) {
        this.recorder.event(eventTarget(this.api.type, job), EVENT_TYPE_NORMAL, REASON_IMAGE_PULL_JOB_COMPLETED, jobCompletedEventMessage(plan.status.succeeded ?? 0, plan.status.failed ?? 0, plan.status.desired));
        log.info('job completed', { desired: plan.status.desired, succeeded: plan.status.succeeded, failed: plan.status.failed });
      }
    }
    // A dispatch that found nothing to write (a full NodeImage, or a cache behind a change someone
    // else made) changed no object whose event would bring the job back: look again shortly. So
    // does a job with more nodes to start; behind the jobs already waiting for a worker. A job
    // fanning out is woken by its writes instead.
    const next = [plan.requeueAfterMs, unwritten > 0 || (plan.more && !fanningOut) ? WAKE_BATCH_MS : undefined].filter((x): x is number => x !== undefined);
    return next.length > 0 ? { requeueAfterMs: Math.min(...next) } : undefined;
  }

  /**
   * Writes the job's tag into (or takes it off) each NodeImage, a few at a time, each merged into the
   * fresh object, and into other jobs' writes to the same NodeImage still waiting for their turn.
   * Returns how many dispatches wrote nothing. More than TAIL_LEFT_RUNNING writes are left running:
   * they wake the job once they are down to that many, and again if any fails or writes nothing.
   */
  private async writeNodeImages(job: ImagePullJob, target: JobTarget, todo: ReadonlyArray<[string, WriteKind]>, log: Logger): Promise<number> {
    if (todo.length === 0) return 0;
    const key = target.key;
    const slot = this.writeSlots.forReconcile();
    const errors: unknown[] = [];
    let unwritten = 0;
    const flying = this.inFlight.get(key) ?? new Map<string, WriteKind>();
    this.inFlight.set(key, flying);
    for (const [node, kind] of todo) flying.set(node, kind);
    const q = this.queue.queue;
    const landed = (node: string): void => {
      flying.delete(node);
      if (this.inFlight.get(key) !== flying) return;
      if (flying.size === 0) this.inFlight.delete(key);
      // Room for the next chunk: the job plans it while these finish.
      else if (flying.size === TAIL_LEFT_RUNNING && !this.stopping) q.add(key);
    };
    const all = Promise.all(
      todo.map(async ([node, kind]) => {
        let full = false;
        let wrote = false;
        const mutate = (fresh: NodeImage): NodeImage | undefined => {
          // Leadership lost while this write waited for its turn: leave it to the next leader.
          if (this.stopping) return undefined;
          let spec: NodeImageSpec | undefined;
          if (kind === 'release') {
            spec = releaseJobTag(fresh, target);
          } else {
            const r = applyJobTag(fresh, target, Date.now());
            full = r === 'full';
            spec = typeof r === 'object' ? r.spec : undefined;
          }
          wrote = spec !== undefined;
          return spec ? { ...fresh, spec } : undefined;
        };
        try {
          if (this.stopping) return;
          const written = await this.nodeImageWrites.update(node, mutate, slot);
          if (this.stopping) return;
          if (full) this.warnOnce(job, `full/${node}`, REASON_PULL_IMAGE_FAILED, nodeImageFullMessage(node, target.image, MAX_IMAGES_PER_NODE_IMAGE));
          // Also a fresh copy that needed nothing (the cache was behind): not written again from the stale one.
          if (!full) this.writes.expect(key, node, versionToExpect(written, this.nodeImages.get(node)?.metadata?.resourceVersion), kind);
          if (wrote && written) log.debug('wrote NodeImage', { nodeImage: node, kind });
          else if (kind === 'dispatch') unwritten++;
        } catch (err) {
          // The NodeImage went with its Node: the next reconcile no longer selects it.
          if (err instanceof ApiError && err.objectNotFound) return;
          errors.push(err);
          log.warn('cannot write NodeImage', { nodeImage: node, kind, ...errorFields(err) });
        } finally {
          landed(node);
        }
      }),
    );
    const failed = (): Error => new Error(`${errors.length} of ${todo.length} NodeImage writes failed`, { cause: errors[0] });
    if (todo.length <= TAIL_LEFT_RUNNING) {
      await all;
      if (errors.length > 0) throw failed();
      return unwritten;
    }
    const settled: Promise<void> = all.then(() => {
      this.tails.delete(settled);
      if (this.stopping) return;
      if (errors.length > 0) {
        this.tailFailures.set(key, failed());
        q.add(key);
      } else if (unwritten > 0) {
        q.addAfter(key, WAKE_BATCH_MS);
      }
    });
    this.tails.add(settled);
    return 0;
  }

  /** Lets go of the job's secret copies and removes the finalizer (upstream imagepulljob_controller.go, the deletion-protection finalizer). */
  private async finalize(job: ImagePullJob, log: Logger): Promise<void> {
    if (!(job.metadata?.finalizers ?? []).includes(FINALIZER_DELETION_PROTECTION)) return;
    await this.secretSync.release(job);
    await updateWithRetry(this.api, job.metadata?.namespace, job.metadata?.name ?? '', (fresh) => {
      const finalizers = fresh.metadata?.finalizers ?? [];
      if (!finalizers.includes(FINALIZER_DELETION_PROTECTION)) return undefined;
      return { ...fresh, metadata: { ...fresh.metadata, finalizers: finalizers.filter((f) => f !== FINALIZER_DELETION_PROTECTION) } };
    }, { initial: job });
    log.info(isDeleting(job) ? 'finalized deleted job' : 'finished job: secrets released, finalizer removed');
  }

  /** completionPolicy.ttlSecondsAfterFinished: the finished job is deleted once it has passed. */
  private async expire(job: ImagePullJob, log: Logger): Promise<Result | void> {
    const ttl = job.spec.completionPolicy?.ttlSecondsAfterFinished;
    const done = timeMs(job.status?.completionTime);
    if (ttl === undefined || done === undefined) return;
    const left = done + ttl * 1000 - Date.now();
    if (left > 0) return { requeueAfterMs: left + 500 };
    if (await deleteIfExists(this.api, job.metadata?.namespace, job.metadata?.name ?? '', job.metadata?.uid)) log.info('deleted finished job after its ttlSecondsAfterFinished');
  }

  private warnOnce(job: ImagePullJob, what: string, reason: string, message: string): void {
    const key = `${job.metadata?.uid ?? ''}/${what}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    if (this.warned.size > 50_000) this.warned.clear();
    this.recorder.event(eventTarget(this.api.type, job), EVENT_TYPE_WARNING, reason, message);
  }
}

export function newImagePullJobController(ctx: ControllerContext): Controller {
  const c = new ImagePullJobController(ctx);
  return { name: IMAGE_PULL_JOB_CONTROLLER, start: () => c.queue.start(), stop: () => c.stop(), retryFailedNow: () => c.queue.retryFailedNow() };
}
