import type { Pod } from '../../api/types/core.js';
import { completedCrrStatus, isCrrCompleted } from '../../api/crr-status.js';
import { unreadyAcquiredCondition } from '../../api/crr-conversion.js';
import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  CONDITION_CRR_POD_UNREADY_ACQUIRED,
  FINALIZER_CRR_UNREADY_ACQUIRED,
  LABEL_CRR_ACTIVE,
} from '../../api/metadata-keys.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';
import { QueueController } from '../../kube/controller.js';
import type { Informer } from '../../kube/informer.js';
import type { Logger } from '../../kube/log.js';
import { ApiError } from '../../kube/rest.js';
import { core, objectKey, PATCH_MERGE, Resource } from '../../kube/resource.js';
import type { Result } from '../../kube/workqueue.js';
import { deleteIfExists, updateWithRetry } from '../../kube/write.js';
import type { ControllerContext } from '../context.js';
import { crrsByPodUid } from '../informers.js';
import { planCrrManager, type ManagerPlan } from './plan.js';
import { addHolder, crrHolder, removeHolder } from './readiness.js';

const CONTROLLER_NAME = 'containerrecreaterequest';
// Each plan step is one write; a CRR needs at most a handful in a row.
const MAX_STEPS_PER_RECONCILE = 16;

/**
 * The manager's half of ContainerRecreateRequests: completes CRRs whose pod went away, whose daemon
 * never answered or whose deadline passed; feeds the daemon the pod's container statuses; holds the
 * pod not-ready during unreadyGracePeriodSeconds (and always lets go); cleans up completed CRRs.
 */
export class CrrController extends QueueController {
  private readonly crrs: Resource<ContainerRecreateRequest>;
  private readonly pods: Resource<Pod>;

  constructor(
    private readonly crrInformer: Informer<ContainerRecreateRequest>,
    private readonly podInformer: Informer<Pod>,
    ctx: ControllerContext,
  ) {
    super(CONTROLLER_NAME, ctx.flags.crrWorkers, (key) => this.reconcileKey(key), ctx.metrics, ctx.logger.child({ controller: CONTROLLER_NAME }));
    this.crrs = new Resource<ContainerRecreateRequest>(ctx.rest, ctx.kruise.crrs);
    this.pods = new Resource<Pod>(ctx.rest, core.pods);
    crrInformer.on({
      add: (crr) => this.queue.add(objectKey(crr)),
      update: (_old, crr) => this.queue.add(objectKey(crr)),
    });
    podInformer.on({
      add: (pod) => this.enqueueFor(pod),
      update: (old, pod) => {
        if (old.metadata?.deletionTimestamp !== pod.metadata?.deletionTimestamp || JSON.stringify(old.status?.containerStatuses) !== JSON.stringify(pod.status?.containerStatuses)) {
          this.enqueueFor(pod);
        }
      },
      delete: (pod) => this.enqueueFor(pod),
    });
  }

  private enqueueFor(pod: Pod): void {
    const uid = pod.metadata?.uid;
    if (uid === undefined) return;
    for (const crr of this.crrInformer.byIndex(crrsByPodUid, uid)) {
      if (!isCrrCompleted(crr) || crr.metadata?.deletionTimestamp !== undefined) this.queue.add(objectKey(crr));
    }
  }

  private async reconcileKey(key: string): Promise<Result | void> {
    let crr = this.crrInformer.get(key);
    for (let i = 0; i < MAX_STEPS_PER_RECONCILE && crr !== undefined; i++) {
      const pod = this.podInformer.get(`${crr.metadata?.namespace ?? ''}/${crr.spec.podName}`);
      const plan = planCrrManager(crr, pod, Date.now());
      if (plan.type === 'done') return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
      const log = this.log.child({ crr: key, pod: `${crr.metadata?.namespace ?? ''}/${crr.spec.podName}` });
      log.debug('step', { step: plan.type });
      crr = await this.apply(crr, pod, plan, log);
    }
    return undefined;
  }

  /** Makes the plan's write; returns the CRR as it now is (undefined once it is gone). */
  private async apply(crr: ContainerRecreateRequest, pod: Pod | undefined, plan: Exclude<ManagerPlan, { type: 'done' }>, log: Logger): Promise<ContainerRecreateRequest | undefined> {
    const ns = crr.metadata?.namespace ?? '';
    const name = crr.metadata?.name ?? '';
    const holder = crrHolder(ns, name);
    const finalizers = (c: ContainerRecreateRequest, add: boolean): ContainerRecreateRequest | undefined => {
      const has = (c.metadata?.finalizers ?? []).includes(FINALIZER_CRR_UNREADY_ACQUIRED);
      if (has === add) return undefined;
      const next = add ? [...(c.metadata?.finalizers ?? []), FINALIZER_CRR_UNREADY_ACQUIRED] : (c.metadata?.finalizers ?? []).filter((f) => f !== FINALIZER_CRR_UNREADY_ACQUIRED);
      return { ...c, metadata: { ...c.metadata, finalizers: next } };
    };
    switch (plan.type) {
      case 'complete': {
        log.info('completing', { message: plan.status.message });
        // On a conflict the daemon wrote meanwhile: its container states are kept, not the plan's.
        const message = plan.status.message;
        const now = new Date();
        return updateWithRetry(this.crrs, ns, name, (c) => (isCrrCompleted(c) ? undefined : { ...c, status: completedCrrStatus(c, now, message) }), { status: true, initial: crr });
      }
      case 'releasePod':
      case 'holdPod': {
        if (pod === undefined) return crr;
        const now = new Date();
        const written = await updateWithRetry(
          this.pods,
          pod.metadata?.namespace,
          pod.metadata?.name ?? '',
          (p) => {
            if (p.metadata?.uid !== pod.metadata?.uid) return undefined;
            const status = plan.type === 'holdPod' ? addHolder(p, holder, now) : removeHolder(p, holder, now);
            return status === undefined ? undefined : { ...p, status };
          },
          { status: true, initial: pod },
        );
        log.info(plan.type === 'holdPod' ? 'pod held not ready' : 'pod readiness released');
        return this.stepWithPod(crr, written, log);
      }
      case 'removeFinalizer':
        return this.gone(updateWithRetry(this.crrs, ns, name, (c) => finalizers(c, false), { initial: crr }));
      case 'addFinalizer':
        return this.gone(updateWithRetry(this.crrs, ns, name, (c) => finalizers(c, true), { initial: crr }));
      case 'removeActiveLabel':
        return this.gone(this.crrs.patch(ns, name, { metadata: { labels: { [LABEL_CRR_ACTIVE]: null } } }, PATCH_MERGE));
      case 'syncStatuses':
        // v1beta1 keeps the snapshot in the status; v1alpha1 (OpenKruise's CRD) in an annotation.
        if (this.crrs.type.codec === undefined) return this.gone(this.crrs.patchStatus(ns, name, { status: { containerStatusSnapshot: plan.value } }));
        return this.gone(this.crrs.patch(ns, name, { metadata: { annotations: { [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(plan.value) } } }, PATCH_MERGE));
      case 'markUnreadyAcquired': {
        log.info('unready grace started', { at: plan.value });
        if (this.crrs.type.codec !== undefined) {
          return this.gone(this.crrs.patch(ns, name, { metadata: { annotations: { [ANNOTATION_CRR_UNREADY_ACQUIRED]: plan.value } } }, PATCH_MERGE));
        }
        const conditions = [...(crr.status?.conditions ?? []).filter((c) => c.type !== CONDITION_CRR_POD_UNREADY_ACQUIRED), unreadyAcquiredCondition(plan.value)];
        return this.gone(this.crrs.patchStatus(ns, name, { status: { conditions } }));
      }
      case 'delete':
        log.info('deleting: ttlSecondsAfterFinished passed');
        await deleteIfExists(this.crrs, ns, name, crr.metadata?.uid);
        return undefined;
    }
  }

  /**
   * After a pod write the next step is planned against the pod as written: the pod cache may not
   * have it yet, and planning against it would repeat the pod write.
   */
  private async stepWithPod(crr: ContainerRecreateRequest, pod: Pod | undefined, log: Logger): Promise<ContainerRecreateRequest | undefined> {
    const plan = planCrrManager(crr, pod, Date.now());
    if (plan.type === 'done' || plan.type === 'holdPod' || plan.type === 'releasePod') return undefined;
    return this.apply(crr, pod, plan, log);
  }

  private async gone(write: Promise<ContainerRecreateRequest | undefined>): Promise<ContainerRecreateRequest | undefined> {
    try {
      return await write;
    } catch (err) {
      if (err instanceof ApiError && err.objectNotFound) return undefined;
      throw err;
    }
  }
}

/** Builds the controller with the shared informers (every CRR, every pod). */
export function newCrrController(ctx: ControllerContext): CrrController {
  return new CrrController(ctx.informers.crrs(), ctx.informers.pods(), ctx);
}
