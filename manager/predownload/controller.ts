import { EVENT_SOURCE_CLONE_SET_CONTROLLER, EVENT_SOURCE_STATEFUL_SET_CONTROLLER, EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING, REASON_CREATED_IMAGE_PULL_JOB, REASON_FAILED_CREATE_IMAGE_PULL_JOB, REASON_INVALID_PREDOWNLOAD_ANNOTATION, REASON_PREDOWNLOAD_FAILED } from '../../api/events.js';
import { LABEL_IMAGE_PREDOWNLOAD_IGNORED, LABEL_PRE_PREDOWNLOAD_CREATED } from '../../api/metadata-keys.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { ControllerRevision } from '../../api/types/core.js';
import type { AdvancedStatefulSet, CloneSet } from '../../api/types/workloads.js';
import { kruise } from '../../kube/kruise.js';
import { QueueController, type Controller } from '../../kube/controller.js';
import type { EventRecorder, EventTarget } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import { errorFields, type Logger } from '../../kube/log.js';
import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource, type ResourceType } from '../../kube/resource.js';
import { createIfMissing, deleteIfExists } from '../../kube/write.js';
import type { ControllerContext } from '../context.js';
import { jobsByControllerUid } from '../informers.js';
import { ANNOTATION_PREDOWNLOAD_FROM, decide, PREDOWNLOAD_FROM_FINISHED } from './decide.js';
import { fromCloneSet, fromStatefulSet, type Workload } from './workload.js';

class RetryLater extends Error {}


interface Kind {
  type: ResourceType;
  crd: string;
  /** The component upstream's events about this kind come from. */
  eventSource: string;
  toWorkload: (o: KubeObject) => Workload;
}

// The informers hold objects of exactly these kinds, hence the casts.
const kinds = {
  CloneSet: { type: kruise.cloneSets, crd: 'clonesets.apps.kruise.io', eventSource: EVENT_SOURCE_CLONE_SET_CONTROLLER, toWorkload: (o: KubeObject) => fromCloneSet(o as CloneSet) },
  StatefulSet: { type: kruise.statefulSets, crd: 'statefulsets.apps.kruise.io', eventSource: EVENT_SOURCE_STATEFUL_SET_CONTROLLER, toWorkload: (o: KubeObject) => fromStatefulSet(o as AdvancedStatefulSet) },
} satisfies Record<string, Kind>;
type KindName = keyof typeof kinds;

interface Crd extends KubeObject {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

const established = (crd: Crd | undefined): boolean => !!crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');

/**
 * CloneSet (and Advanced StatefulSet) image pre-download, next to a workload controller kruise-ts
 * does not own: during an in-place rollout it creates one ImagePullJob per changed container for
 * the nodes of the old pods, and deletes them when the rollout ends. A workload kind whose CRD is
 * not installed stays off (one log line) and switches on when the CRD appears.
 */
class PreDownloadController implements Controller {
  readonly name = 'predownload';
  private readonly qc: QueueController;
  private readonly workloads = new Map<KindName, { informer: Informer<KubeObject>; stop: AbortController }>();
  private readonly crdInformer: Informer<Crd>;
  private readonly jobs: Informer<ImagePullJob>;
  private readonly jobRes: Resource<ImagePullJob>;
  private readonly revisions: Resource<ControllerRevision>;
  private readonly recorders: Record<KindName, EventRecorder>;
  private readonly log: Logger;
  private readonly stopAll = new AbortController();

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger.child({ controller: this.name });
    this.recorders = { CloneSet: ctx.recorder(kinds.CloneSet.eventSource), StatefulSet: ctx.recorder(kinds.StatefulSet.eventSource) };
    this.qc = new QueueController(this.name, 2, (key) => this.reconcile(key), ctx.metrics, this.log);
    this.jobRes = new Resource(ctx.rest, ctx.kruise.imagePullJobs);
    this.revisions = new Resource(ctx.rest, core.controllerrevisions);
    this.jobs = ctx.informers.imagePullJobs();
    this.jobs.on({
      // A pre-download that failed must show on its workload.
      update: (_o, j) => {
        const owner = j.metadata?.ownerReferences?.find((o) => o.controller && (o.kind === 'CloneSet' || o.kind === 'StatefulSet'));
        if (owner && (j.status?.failed ?? 0) > 0 && j.status?.completionTime) this.qc.queue.add(`${owner.kind}/${j.metadata?.namespace}/${owner.name}/${owner.uid}`);
      },
    });
    this.crdInformer = ctx.informers.factory.unshared<Crd>(core.crds, this.log);
    this.crdInformer.on({ add: (c) => this.crdChanged(c), update: (_o, c) => this.crdChanged(c), delete: (c) => this.crdGone(c) });
  }

  start(): void {
    void this.crdInformer.run(this.stopAll.signal);
    void this.crdInformer.synced.then(() => {
      for (const [kind, k] of Object.entries(kinds) as Array<[KindName, Kind]>) {
        if (!established(this.crdInformer.get(k.crd))) {
          this.log.info(`${kind} CRD (${k.crd}) is not installed: its image pre-download stays off until it appears`);
        }
      }
    });
    this.qc.start();
  }

  retryFailedNow(): void {
    this.qc.retryFailedNow();
  }

  async stop(): Promise<void> {
    this.stopAll.abort();
    for (const w of this.workloads.values()) w.stop.abort();
    await this.qc.stop();
    await Promise.all(Object.values(this.recorders).map((r) => r.flush()));
  }

  private kindOfCrd(crd: Crd): KindName | undefined {
    return (Object.keys(kinds) as KindName[]).find((k) => kinds[k].crd === crd.metadata?.name);
  }

  private crdChanged(crd: Crd): void {
    const kind = this.kindOfCrd(crd);
    if (!kind || this.workloads.has(kind) || !established(crd)) return;
    const stop = new AbortController();
    const informer = this.ctx.informers.factory.unshared<KubeObject>(kinds[kind].type, this.log);
    const enqueue = (o: KubeObject): void => this.qc.queue.add(`${kind}/${o.metadata?.namespace}/${o.metadata?.name}/${o.metadata?.uid}`);
    informer.on({
      add: enqueue,
      update: (a, b) => {
        // Only what the rules read: revisions, readiness, replicas, strategy, annotations.
        const seen = (o: KubeObject): string => JSON.stringify([(o as CloneSet).status, (o as CloneSet).spec, o.metadata?.annotations]);
        if (seen(a) !== seen(b)) enqueue(b);
      },
      delete: enqueue,
    });
    this.workloads.set(kind, { informer, stop });
    void informer.run(stop.signal);
    this.log.info(`${kind} CRD found: image pre-download is on`, { crd: kinds[kind].crd });
  }

  private crdGone(crd: Crd): void {
    const kind = this.kindOfCrd(crd);
    const w = kind ? this.workloads.get(kind) : undefined;
    if (!kind || !w) return;
    w.stop.abort();
    this.workloads.delete(kind);
    this.log.info(`${kind} CRD removed: image pre-download is off`, { crd: kinds[kind].crd });
  }

  private async reconcile(key: string): Promise<void> {
    const [kind, namespace = '', name = '', uid = ''] = key.split('/') as [KindName, string?, string?, string?];
    const w = this.workloads.get(kind);
    if (!w) return;
    await w.informer.synced;
    const obj = w.informer.get(`${namespace}/${name}`);
    if (!obj || obj.metadata?.uid !== uid) {
      await this.deleteJobs(uid, namespace, 'workload deleted');
      return;
    }
    const workload = kinds[kind].toWorkload(obj);
    const target: EventTarget = { apiVersion: workload.apiVersion, kind: workload.kind, name, namespace, uid };
    const recorder = this.recorders[kind];
    const getRev = async (rev: string | undefined): Promise<ControllerRevision | undefined> => {
      if (!rev) return undefined;
      try {
        return await this.revisions.get(namespace, rev);
      } catch (err) {
        if (err instanceof ApiError && err.notFound) return undefined;
        throw err;
      }
    };
    const [updateRev, currentRev] = await Promise.all([getRev(workload.updateRevision), getRev(workload.currentRevision)]);
    const { decision, warnings } = decide(workload, updateRev, currentRev);
    for (const w of warnings) recorder.event(target, EVENT_TYPE_WARNING, REASON_INVALID_PREDOWNLOAD_ANNOTATION, w);
    const log = this.log.child({ [kind === 'CloneSet' ? 'cloneSet' : 'statefulSet']: `${namespace}/${name}`, updateRevision: workload.updateRevision });
    switch (decision.kind) {
      case 'finished':
        await this.deleteJobs(uid, namespace, 'rollout finished');
        if (decision.markFinished) {
          await this.revisions.patch(namespace, currentRev?.metadata?.name ?? '', { metadata: { annotations: { [ANNOTATION_PREDOWNLOAD_FROM]: PREDOWNLOAD_FROM_FINISHED } } });
        }
        return;
      case 'wait':
      case 'done':
        this.reportFailures(uid, target, recorder);
        return;
      case 'ignore':
        log.info('image pre-download skipped', { reason: decision.reason });
        await this.revisions.patch(namespace, updateRev?.metadata?.name ?? '', { metadata: { labels: { [LABEL_IMAGE_PREDOWNLOAD_IGNORED]: 'true' } } });
        return;
      case 'create':
        for (const job of decision.jobs) {
          try {
            if (await createIfMissing(this.jobRes, job)) {
              recorder.event(target, EVENT_TYPE_NORMAL, REASON_CREATED_IMAGE_PULL_JOB, `created ImagePullJob ${job.metadata?.name} to pre-download ${job.spec.image}`);
              log.info('created ImagePullJob', { imagePullJob: `${namespace}/${job.metadata?.name}`, image: job.spec.image });
            } else if ((await this.jobRes.get(namespace, job.metadata?.name ?? '')).metadata?.deletionTimestamp) {
              // The same name from an earlier rollout is still going away: come back for it.
              throw new RetryLater(`ImagePullJob ${job.metadata?.name} from an earlier rollout is still being deleted`);
            }
          } catch (err) {
            if (err instanceof RetryLater) throw err;
            // Warning (upstream emits it as Normal): a failed pre-download must stand out.
            recorder.event(target, EVENT_TYPE_WARNING, REASON_FAILED_CREATE_IMAGE_PULL_JOB, `failed to create ImagePullJob ${job.metadata?.name}: ${(err as Error).message}`);
            log.warn('cannot create ImagePullJob', { imagePullJob: `${namespace}/${job.metadata?.name}`, ...errorFields(err) });
          }
        }
        await this.revisions.patch(namespace, updateRev?.metadata?.name ?? '', {
          metadata: { labels: { [LABEL_PRE_PREDOWNLOAD_CREATED]: 'true' }, annotations: { [ANNOTATION_PREDOWNLOAD_FROM]: workload.currentRevision ?? '' } },
        });
    }
  }

  private reportFailures(uid: string, target: EventTarget, recorder: EventRecorder): void {
    for (const j of this.jobs.byIndex(jobsByControllerUid, uid)) {
      const failed = j.status?.failed ?? 0;
      if (failed > 0 && j.status?.completionTime) {
        const nodes = (j.status.failedNodes ?? []).join(', ');
        recorder.event(target, EVENT_TYPE_WARNING, REASON_PREDOWNLOAD_FAILED, `ImagePullJob ${j.metadata?.name} (${j.spec.image}) failed on ${failed} node(s)${nodes ? `: ${nodes}` : ''}`);
      }
    }
  }

  private async deleteJobs(uid: string, namespace: string, why: string): Promise<void> {
    for (const j of this.jobs.byIndex(jobsByControllerUid, uid)) {
      if (await deleteIfExists(this.jobRes, namespace, j.metadata?.name ?? '', j.metadata?.uid)) {
        this.log.info('deleted pre-download ImagePullJob', { imagePullJob: `${namespace}/${j.metadata?.name}`, reason: why });
      }
    }
  }
}

export function newPreDownloadController(ctx: ControllerContext): Controller | undefined {
  return ctx.flags.clonesetPredownload ? new PreDownloadController(ctx) : undefined;
}
