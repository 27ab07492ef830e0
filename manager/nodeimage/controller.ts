// The NodeImage controller (upstream pkg/controller/nodeimage): one NodeImage per Node, labels mirrored, deleted with the
// Node; tags whose owners are gone or whose TTL passed are dropped; tags a node never answers are
// failed. Reads only the shared caches; writes only what differs.
import type { Node, ObjectReference, Secret } from '../../api/types/core.js';
import { EVENT_SOURCE_NODE_IMAGE_CONTROLLER, EVENT_TYPE_WARNING, REASON_PULL_IMAGE_FAILED } from '../../api/events.js';
import { KIND_IMAGE_PULL_JOB } from '../../api/group-version.js';
import { jsonEqual } from '../../api/json-equal.js';
import type { ReferenceObject } from '../../api/types/common.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { QueueController, type Controller } from '../../kube/controller.js';
import { eventTarget, referenceTarget, type EventRecorder } from '../../kube/events.js';
import type { Informer } from '../../kube/informer.js';
import { sameLabels } from '../../kube/labels.js';
import type { Logger } from '../../kube/log.js';
import { ApiError } from '../../kube/rest.js';
import { core, Resource } from '../../kube/resource.js';
import type { Result } from '../../kube/workqueue.js';
import { createIfMissing, deleteIfExists, updateWithRetry } from '../../kube/write.js';
import type { ControllerContext } from '../context.js';
import { nodeImagesByOwnerUid, nodeImagesByPullSecret } from '../informers.js';
import { cleanSpec, isVirtualKubelet, jobOwnerRefs, lifecycle, pullSecretRefs, readiness, type SpecLookups } from './desired.js';
import { isDeleting } from '../../api/object-meta.js';
import { OwnerLookup } from './owners.js';
import { nodeImageSpecPatch } from './spec-patch.js';
import { timeoutStatus, type FailedTag } from './status.js';

const NODE_IMAGE_CONTROLLER = 'nodeimage-controller';

/** Status entries as far as the controller cares: phase, version and completion of each tag. */
function statusShape(ni: NodeImage): string {
  const parts: string[] = [];
  for (const [image, s] of Object.entries(ni.status?.imageStatuses ?? {})) {
    for (const t of s.tags ?? []) parts.push(`${image}\u0000${t.tag}\u0000${t.phase}\u0000${t.version ?? 0}\u0000${t.completionTime ?? ''}`);
  }
  return parts.join('\u0001');
}

class NodeImageController {
  readonly queue: QueueController;
  private readonly nodes: Informer<Node>;
  private readonly nodeImages: Informer<NodeImage>;
  private readonly secrets: Informer<Secret>;
  private readonly api: Resource<NodeImage>;
  private readonly secretApi: Resource<Secret>;
  private readonly owners: OwnerLookup;
  private readonly recorder: EventRecorder;
  private readonly log: Logger;

  constructor(private readonly ctx: ControllerContext) {
    this.log = ctx.logger.child({ controller: NODE_IMAGE_CONTROLLER });
    this.api = new Resource<NodeImage>(ctx.rest, ctx.kruise.nodeImages);
    this.secretApi = new Resource<Secret>(ctx.rest, core.secrets);
    this.nodes = ctx.informers.nodes();
    this.nodeImages = ctx.informers.nodeImages();
    this.secrets = ctx.informers.secrets();
    const jobs = ctx.informers.imagePullJobs();
    this.owners = new OwnerLookup(jobs, new Resource<ImagePullJob>(ctx.rest, ctx.kruise.imagePullJobs));
    this.recorder = ctx.recorder(EVENT_SOURCE_NODE_IMAGE_CONTROLLER);
    this.queue = new QueueController(NODE_IMAGE_CONTROLLER, ctx.flags.nodeImageWorkers, (key) => this.reconcile(key), ctx.metrics, this.log);
    const q = this.queue.queue;

    this.nodeImages.on({
      add: (ni) => q.add(ni.metadata?.name ?? ''),
      update: (a, b) => {
        // Progress-only status writes change nothing this controller decides.
        if (
          !jsonEqual(a.spec, b.spec) ||
          !sameLabels(a.metadata?.labels, b.metadata?.labels) ||
          isDeleting(a) !== isDeleting(b) ||
          statusShape(a) !== statusShape(b)
        ) {
          q.add(b.metadata?.name ?? '');
        }
      },
      delete: (ni) => q.add(ni.metadata?.name ?? ''),
    });
    this.nodes.on({
      add: (n) => this.onNode(n),
      update: (_old, n) => this.onNode(n),
      delete: (n) => {
        if (this.nodeImages.get(n.metadata?.name ?? '')) q.add(n.metadata?.name ?? '');
      },
    });
    jobs.on({
      update: (a, b) => {
        if (!isDeleting(a) && isDeleting(b)) this.onJobGone(b);
        // Its nodes' finished tags were held past their TTL while it ran.
        else if (!a.status?.completionTime && b.status?.completionTime) this.enqueueOwned(b);
      },
      delete: (job) => this.onJobGone(job),
    });
    this.secrets.on({
      delete: (s) => {
        for (const ni of this.nodeImages.byIndex(nodeImagesByPullSecret, `${s.metadata?.namespace ?? ''}/${s.metadata?.name ?? ''}`)) {
          q.add(ni.metadata?.name ?? '');
        }
      },
    });
  }

  /** Upstream's node event handler (nodeimage_event_handler.go): a Node without NodeImage once Ready (after the delay); one with, when labels drift. */
  private onNode(n: Node): void {
    const name = n.metadata?.name ?? '';
    const ni = this.nodeImages.get(name);
    if (isDeleting(n)) {
      if (ni) this.queue.queue.add(name);
      return;
    }
    if (isVirtualKubelet(n)) return;
    if (ni) {
      if (!sameLabels(n.metadata?.labels, ni.metadata?.labels)) this.queue.queue.add(name);
      return;
    }
    const lc = lifecycle(n, undefined, Date.now(), this.ctx.flags.nodeImageCreationDelay);
    if (lc.action === 'create') this.queue.queue.add(name);
    else if (lc.action === 'wait') this.queue.queue.addAfter(name, lc.afterMs);
  }

  /** Upstream only finds the NodeImages of jobs it reconciled since it started (its in-memory job-to-nodes cache); the index finds all. */
  private onJobGone(job: ImagePullJob): void {
    this.owners.markGone(job.metadata?.uid ?? '');
    this.enqueueOwned(job);
  }

  private enqueueOwned(job: ImagePullJob): void {
    for (const ni of this.nodeImages.byIndex(nodeImagesByOwnerUid, job.metadata?.uid ?? '')) this.queue.queue.add(ni.metadata?.name ?? '');
  }

  private async reconcile(name: string): Promise<Result | void> {
    const node = this.nodes.get(name);
    const ni = this.nodeImages.get(name);
    const log = this.log.child({ nodeImage: name });
    const lc = lifecycle(node, ni, Date.now(), this.ctx.flags.nodeImageCreationDelay);
    switch (lc.action) {
      case 'none':
        return;
      case 'wait':
        return { requeueAfterMs: lc.afterMs };
      case 'delete':
        if (await deleteIfExists(this.api, undefined, name, ni?.metadata?.uid)) log.info('deleted NodeImage: its Node is gone');
        return;
      case 'create':
        if (await createIfMissing(this.api, { metadata: { name, labels: lc.labels }, spec: {} })) log.info('created NodeImage');
        return;
      case 'sync':
        if (!ni) return;
        return this.sync(ni, node, log);
    }
  }

  private async sync(ni: NodeImage, node: Node | undefined, log: Logger): Promise<Result | void> {
    const name = ni.metadata?.name ?? '';
    const lookups = await this.lookups(ni);
    const nodeLabels = node ? { ...(node.metadata?.labels ?? {}) } : undefined;
    const cleaned = cleanSpec(ni, nodeLabels, lookups, Date.now());
    if (cleaned.changed) {
      await updateWithRetry(
        this.api,
        undefined,
        name,
        (fresh) => {
          const again = cleanSpec(fresh, nodeLabels, lookups, Date.now());
          if (!again.changed) return undefined;
          return { ...fresh, metadata: { ...fresh.metadata, ...(again.labels ? { labels: again.labels } : {}) }, spec: again.spec };
        },
        // A label change goes as a PUT; a spec change alone as a patch, so a daemon's status write
        // in between refuses it only when it moved a dropped tag's status (its TTL).
        { initial: ni, asPatch: nodeImageSpecPatch },
      );
      if (cleaned.removed.length > 0) log.info('dropped tags', { removed: cleaned.removed });
      if (cleaned.labels) log.info('mirrored Node labels');
      // The write comes back as an update event, which runs the status pass on what was written.
      return;
    }
    const timeouts = timeoutStatus(ni, readiness(node), Date.now());
    if (timeouts.status) {
      const written = await updateWithRetry(
        this.api,
        undefined,
        name,
        (fresh) => {
          const again = timeoutStatus(fresh, readiness(node), Date.now());
          return again.status ? { ...fresh, status: again.status } : undefined;
        },
        { status: true, initial: ni },
      );
      if (written) this.reportFailed(ni, timeouts.failed, log);
    }
    const next = [cleaned.requeueAfterMs, timeouts.requeueAfterMs].filter((x): x is number => x !== undefined);
    // A timer firing a little early would find nothing due and set itself again; a second more is cheap.
    return next.length > 0 ? { requeueAfterMs: Math.min(...next) + 1000 } : undefined;
  }

  /** Owner and secret answers for everything the NodeImage references, asked before the pure pass. */
  private async lookups(ni: NodeImage): Promise<SpecLookups> {
    const owners = await this.owners.resolve(jobOwnerRefs(ni));
    const secrets = new Map<string, 'present' | 'gone' | 'unknown'>();
    for (const ref of pullSecretRefs(ni)) {
      const key = `${ref.namespace ?? ''}/${ref.name ?? ''}`;
      if (!secrets.has(key)) secrets.set(key, await this.secretState(ref));
    }
    return {
      owner: (ref: ObjectReference) => owners.get(ref.uid ?? '') ?? 'alive',
      secret: (ref: ReferenceObject) => secrets.get(`${ref.namespace ?? ''}/${ref.name ?? ''}`) ?? 'unknown',
    };
  }

  private async secretState(ref: ReferenceObject): Promise<'present' | 'gone' | 'unknown'> {
    if (!ref.namespace || !ref.name) return 'unknown';
    // The daemons read secrets in their own namespace alone: a reference elsewhere (OpenKruise's
    // kruise-daemon-config copies, left when kruise-ts took over) can never be used, and the job
    // controller references its own copy instead.
    if (ref.namespace !== this.ctx.flags.daemonConfigNamespace) return 'gone';
    if (this.secrets.get(`${ref.namespace}/${ref.name}`)) return 'present';
    // The job controller creates a secret copy before it references it: the cache may be behind.
    try {
      await this.secretApi.get(ref.namespace, ref.name);
      return 'present';
    } catch (err) {
      return err instanceof ApiError && err.notFound ? 'gone' : 'unknown';
    }
  }

  private reportFailed(ni: NodeImage, failed: readonly FailedTag[], log: Logger): void {
    const target = eventTarget(this.ctx.kruise.nodeImages, ni);
    for (const f of failed) {
      const text = `Image ${f.image}:${f.tag} ${f.message}`;
      log.warn('marked tag failed', { image: f.image, tag: f.tag, reason: f.message });
      this.recorder.event(target, EVENT_TYPE_WARNING, REASON_PULL_IMAGE_FAILED, text);
      for (const o of f.owners) {
        if (o.kind !== KIND_IMAGE_PULL_JOB || !o.name) continue;
        this.recorder.event(
          referenceTarget(this.ctx.kruise.imagePullJobs, o),
          EVENT_TYPE_WARNING,
          REASON_PULL_IMAGE_FAILED,
          `node ${ni.metadata?.name ?? ''}: ${text}`,
        );
      }
    }
  }
}

export function newNodeImageController(ctx: ControllerContext): Controller {
  const c = new NodeImageController(ctx);
  return {
    name: NODE_IMAGE_CONTROLLER,
    start: () => c.queue.start(),
    stop: () => c.queue.stop(),
    retryFailedNow: () => c.queue.retryFailedNow(),
  };
}
