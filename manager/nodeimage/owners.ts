import type { ObjectReference } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { Informer } from '../../kube/informer.js';
import { ApiError } from '../../kube/rest.js';
import type { Resource } from '../../kube/resource.js';
import { isDeleting } from '../../api/object-meta.js';
import { COMPLETION_POLICY_NEVER } from '../../api/enums.js';

/** running: an Always job that has not completed, which still counts its nodes' finished tags. */
export type OwnerState = 'running' | 'alive' | 'gone';

function liveState(job: ImagePullJob): OwnerState {
  if (isDeleting(job)) return 'gone';
  return job.spec.completionPolicy?.type !== COMPLETION_POLICY_NEVER && !job.status?.completionTime ? 'running' : 'alive';
}

/**
 * Answers whether the ImagePullJob an ownerReference names still exists. The shared cache answers
 * almost always. A job the cache does not hold (or holds under another UID) may only be newer than
 * the cache, so the API server is asked; a UID found gone is remembered, so one deleted job met on
 * thousands of NodeImages costs one read, and UIDs seen deleted through the cache cost none.
 */
export class OwnerLookup {
  private readonly gone = new Set<string>();

  constructor(
    private readonly jobs: Informer<ImagePullJob>,
    private readonly api: Resource<ImagePullJob>,
    private readonly maxRemembered = 10_000,
  ) {}

  /** A job with this UID was seen deleted, or being deleted: UIDs are never reused. */
  markGone(uid: string): void {
    this.gone.add(uid);
    for (const first of this.gone) {
      if (this.gone.size <= this.maxRemembered) break;
      this.gone.delete(first);
    }
  }

  /** Resolves every reference by UID; unexpected API errors keep the owner (upstream keeps it too). */
  async resolve(refs: readonly ObjectReference[]): Promise<Map<string, OwnerState>> {
    const out = new Map<string, OwnerState>();
    for (const ref of refs) {
      const uid = ref.uid ?? '';
      if (!out.has(uid)) out.set(uid, await this.state(ref));
    }
    return out;
  }

  private async state(ref: ObjectReference): Promise<OwnerState> {
    const uid = ref.uid ?? '';
    // ImagePullJobs are namespaced: a reference without a namespace or a name names none (upstream's
    // cached Get answers it NotFound too), and asking would send the API server `namespaces//…`.
    if (!ref.namespace || !ref.name) return 'gone';
    const cached = this.jobs.get(`${ref.namespace}/${ref.name}`);
    if (cached && cached.metadata?.uid === uid) return liveState(cached);
    if (this.gone.has(uid)) return 'gone';
    try {
      const job = await this.api.get(ref.namespace, ref.name);
      if (job.metadata?.uid === uid && !isDeleting(job)) return liveState(job);
    } catch (err) {
      if (!(err instanceof ApiError && err.objectNotFound)) return 'alive';
    }
    this.markGone(uid);
    return 'gone';
  }
}
