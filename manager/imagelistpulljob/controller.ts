// The ImageListPullJob controller (upstream pkg/controller/imagelistpulljob): one child ImagePullJob per image, replaced when the
// template changes, removed with its image; the children's results aggregated; TTL after completion.
import { EVENT_SOURCE_IMAGE_LIST_PULL_JOB_CONTROLLER, EVENT_TYPE_NORMAL, REASON_SUCCESSFUL_CREATE_IMAGE_PULL_JOB, REASON_SUCCESSFUL_DELETE_IMAGE_PULL_JOB, createdImagePullJobsEventMessage, deletedImagePullJobsEventMessage } from '../../api/events.js';
import { KIND_IMAGE_LIST_PULL_JOB } from '../../api/group-version.js';
import { jsonEqual } from '../../api/json-equal.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/metadata-keys.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { QueueController, type Controller } from '../../kube/controller.js';
import { eventTarget, type EventRecorder } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { ApiError } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import type { Result } from '../../kube/workqueue.js';
import { createIfMissing, deleteIfExists, updateWithRetry } from '../../kube/write.js';
import type { ControllerContext } from '../context.js';
import { jobsByListOwnerUid } from '../informers.js';
import { jobKey } from '../imagepulljob/target.js';
import { isDeleting } from '../../api/object-meta.js';
import { timeMs } from '../../api/time.js';
import { planChildren } from './desired.js';
import { listStatus } from './status.js';

const IMAGE_LIST_PULL_JOB_CONTROLLER = 'imagelistpulljob-controller';

function listOwner(job: ImagePullJob): { name: string; uid: string } | undefined {
  const ref = job.metadata?.ownerReferences?.find((o) => o.controller === true && o.kind === KIND_IMAGE_LIST_PULL_JOB);
  return ref ? { name: ref.name, uid: ref.uid } : undefined;
}


class ImageListPullJobController {
  readonly queue: QueueController;
  private readonly lists: Informer<ImageListPullJob>;
  private readonly jobs: Informer<ImagePullJob>;
  private readonly api: Resource<ImageListPullJob>;
  private readonly jobApi: Resource<ImagePullJob>;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;

  constructor(ctx: ControllerContext) {
    this.log = ctx.logger.child({ controller: IMAGE_LIST_PULL_JOB_CONTROLLER });
    this.api = new Resource<ImageListPullJob>(ctx.rest, ctx.kruise.imageListPullJobs);
    this.jobApi = new Resource<ImagePullJob>(ctx.rest, ctx.kruise.imagePullJobs);
    this.lists = ctx.informers.imageListPullJobs();
    this.jobs = ctx.informers.imagePullJobs();
    this.recorder = ctx.recorder(EVENT_SOURCE_IMAGE_LIST_PULL_JOB_CONTROLLER);
    this.queue = new QueueController(IMAGE_LIST_PULL_JOB_CONTROLLER, ctx.flags.imagePullJobWorkers, (key) => this.reconcile(key), ctx.metrics, this.log);
    const q = this.queue.queue;
    this.lists.on({ add: (l) => q.add(jobKey(l)), update: (_a, b) => q.add(jobKey(b)), delete: (l) => q.add(jobKey(l)) });
    const onChild = (j: ImagePullJob): void => {
      const o = listOwner(j);
      if (o) q.add(`${j.metadata?.namespace ?? ''}/${o.name}`);
    };
    this.jobs.on({
      add: onChild,
      update: (a, b) => {
        if (!jsonEqual(a.status, b.status) || !jsonEqual(a.spec, b.spec) || isDeleting(a) !== isDeleting(b)) onChild(b);
      },
      delete: onChild,
    });
  }

  private async reconcile(key: string): Promise<Result | void> {
    const list = this.lists.get(key);
    if (!list || isDeleting(list)) return;
    const log = this.log.child({ imageListPullJob: key });
    if (list.status?.completionTime) return this.expire(list, log);

    const children = this.jobs.byIndex(jobsByListOwnerUid, list.metadata?.uid ?? '');
    const plan = planChildren(list, children, this.api.apiVersion);
    if (list.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] !== plan.hash) {
      await updateWithRetry(this.api, list.metadata?.namespace, list.metadata?.name ?? '', (fresh) => {
        if (fresh.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === plan.hash) return undefined;
        return { ...fresh, metadata: { ...fresh.metadata, labels: { ...(fresh.metadata?.labels ?? {}), [LABEL_CONTROLLER_REVISION_HASH]: plan.hash } } };
      }, { initial: list });
      // The label write comes back as an event; the children follow in that reconcile.
      return;
    }
    const created = await this.createChildren(plan.create, log);
    if (created > 0) this.recorder.event(eventTarget(this.api.type, list), EVENT_TYPE_NORMAL, REASON_SUCCESSFUL_CREATE_IMAGE_PULL_JOB, createdImagePullJobsEventMessage(created));
    let deleted = 0;
    for (const child of plan.delete) {
      if (await deleteIfExists(this.jobApi, child.metadata?.namespace, child.metadata?.name ?? '', child.metadata?.uid)) deleted++;
    }
    if (deleted > 0) {
      this.recorder.event(eventTarget(this.api.type, list), EVENT_TYPE_NORMAL, REASON_SUCCESSFUL_DELETE_IMAGE_PULL_JOB, deletedImagePullJobsEventMessage(deleted));
      log.info('deleted child jobs', { deleted });
    }

    const status = listStatus(list, plan.current, Date.now());
    if (!jsonEqual(status, list.status)) {
      try {
        await this.api.updateStatus({ ...list, status });
      } catch (err) {
        // Changed since it was read: the event of that change runs this again.
        if (!(err instanceof ApiError && (err.conflict || err.objectNotFound))) throw err;
      }
      if (status.completionTime) log.info('list job completed', { desired: status.desired, succeeded: status.succeeded });
    }
  }

  /** Creates children in batches of 1, 2, 4, ... and stops at the first failure (upstream's slow start). */
  private async createChildren(children: ImagePullJob[], log: Logger): Promise<number> {
    let created = 0;
    let batch = 1;
    for (let i = 0; i < children.length; i += batch, batch *= 2) {
      const results = await Promise.allSettled(children.slice(i, i + batch).map((c) => createIfMissing(this.jobApi, c)));
      created += results.filter((r) => r.status === 'fulfilled' && r.value).length;
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw new Error(`cannot create child ImagePullJob (${created} created)`, { cause: failure.reason });
    }
    if (created > 0) log.info('created child jobs', { created });
    return created;
  }

  private async expire(list: ImageListPullJob, log: Logger): Promise<Result | void> {
    const ttl = list.spec.completionPolicy?.ttlSecondsAfterFinished;
    const done = timeMs(list.status?.completionTime);
    if (ttl === undefined || done === undefined) return;
    const left = done + ttl * 1000 - Date.now();
    if (left > 0) return { requeueAfterMs: left + 500 };
    if (await deleteIfExists(this.api, list.metadata?.namespace, list.metadata?.name ?? '', list.metadata?.uid)) log.info('deleted finished list job after its ttlSecondsAfterFinished');
  }
}

export function newImageListPullJobController(ctx: ControllerContext): Controller {
  const c = new ImageListPullJobController(ctx);
  return { name: IMAGE_LIST_PULL_JOB_CONTROLLER, start: () => c.queue.start(), stop: () => c.queue.stop(), retryFailedNow: () => c.queue.retryFailedNow() };
}
