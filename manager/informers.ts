// The manager's shared caches: one informer per kind, with every index a controller looks things up
// by. Controllers take informers from here and never from each other, so what the manager holds in
// memory and how it finds things is in one place.
import { KIND_IMAGE_LIST_PULL_JOB } from '../api/group-version.js';
import { isDeleting } from '../api/object-meta.js';
import { LABEL_CRR_POD_UID } from '../api/metadata-keys.js';
import type { ContainerRecreateRequest } from '../api/types/containerrecreaterequest.js';
import type { Node, Pod, Secret } from '../api/types/core.js';
import type { ImageListPullJob } from '../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../api/types/imagepulljob.js';
import type { NodeImage } from '../api/types/nodeimage.js';
import type { Index, Informer } from '../kube/informer.js';
import type { InformerFactory } from '../kube/informers.js';
import type { KruiseApi } from '../kube/kruise.js';
import { core } from '../kube/resource.js';
import { jobOwnerRefs, pullSecretRefs } from './nodeimage/desired.js';
import { referencesOf } from './imagepulljob/secrets.js';

/**
 * How long at most the manager's informers stay away from a server that keeps ending their watches
 * (kube-apiserver sheds watchers that lag when thousands of daemons watch NodeImages). Each is one
 * cluster-wide watch: away for the informers' usual 30 s, a job's completion trails its nodes'
 * results, and a resume past the server's event window becomes a full re-list.
 */
export const MANAGER_SHEDDING_BACKOFF_MAX_MS = 2_000;

/** Jobs neither finished nor being deleted: the only ones node and pod changes can concern. */
export function isActiveJob(job: ImagePullJob): boolean {
  return !isDeleting(job) && !job.status?.completionTime;
}

/** NodeImages by the UID of every ImagePullJob owning one of their tags. */
export const nodeImagesByOwnerUid: Index<NodeImage> = {
  name: 'ownerUID',
  keys: (ni) => [...new Set(jobOwnerRefs(ni).map((r) => r.uid ?? ''))],
};

/** NodeImages by "namespace/name" of every pull secret they reference. */
export const nodeImagesByPullSecret: Index<NodeImage> = {
  name: 'pullSecret',
  keys: (ni) => [...new Set(pullSecretRefs(ni).map((r) => `${r.namespace ?? ''}/${r.name ?? ''}`))],
};

/** Active jobs, under the single value "true". */
export const activeJobs: Index<ImagePullJob> = { name: 'active', keys: (j) => (isActiveJob(j) ? ['true'] : []) };
export const ACTIVE = 'true';

/** Active jobs by "namespace/secret" of each pull secret. */
export const activeJobsByPullSecret: Index<ImagePullJob> = {
  name: 'pullSecret',
  keys: (j) => (isActiveJob(j) ? [...new Set(j.spec?.pullSecrets ?? [])].map((s) => `${j.metadata?.namespace ?? ''}/${s}`) : []),
};

/** Active podSelector jobs by namespace. */
export const activePodSelectorJobsByNamespace: Index<ImagePullJob> = {
  name: 'podSelectorNamespace',
  keys: (j) => (isActiveJob(j) && j.spec?.podSelector ? [j.metadata?.namespace ?? ''] : []),
};

/** ImagePullJobs by the UID of the ImageListPullJob that controls them. */
export const jobsByListOwnerUid: Index<ImagePullJob> = {
  name: 'listOwnerUID',
  keys: (j) => {
    const ref = j.metadata?.ownerReferences?.find((o) => o.controller === true && o.kind === KIND_IMAGE_LIST_PULL_JOB);
    return ref ? [ref.uid] : [];
  },
};

/** ImagePullJobs by the UID of their controller (pre-download's CloneSets and StatefulSets). */
export const jobsByControllerUid: Index<ImagePullJob> = {
  name: 'controllerUID',
  keys: (j) => j.metadata?.ownerReferences?.filter((o) => o.controller).map((o) => o.uid) ?? [],
};

export const podsByNamespace: Index<Pod> = { name: 'namespace', keys: (p) => [p.metadata?.namespace ?? ''] };
export const podsByNode: Index<Pod> = { name: 'nodeName', keys: (p) => (p.spec?.nodeName ? [p.spec.nodeName] : []) };

/** Pull-secret copies by the job keys ("namespace/name") listed on them. */
export const secretsByJobReference: Index<Secret> = { name: 'references', keys: (s) => referencesOf(s) };

export const crrsByPodUid: Index<ContainerRecreateRequest> = {
  name: 'podUID',
  keys: (crr) => {
    const uid = crr.metadata?.labels?.[LABEL_CRR_POD_UID];
    return uid !== undefined ? [uid] : [];
  },
};

/** The informers the leader's controllers share, each created (and indexed) on first use. */
export class SharedInformers {
  constructor(
    readonly factory: InformerFactory,
    private readonly kruise: KruiseApi,
  ) {}

  nodes(): Informer<Node> {
    return this.factory.informer<Node>(core.nodes);
  }

  nodeImages(): Informer<NodeImage> {
    return this.factory.informer<NodeImage>(this.kruise.nodeImages).addIndex(nodeImagesByOwnerUid).addIndex(nodeImagesByPullSecret);
  }

  imagePullJobs(): Informer<ImagePullJob> {
    return this.factory
      .informer<ImagePullJob>(this.kruise.imagePullJobs)
      .addIndex(activeJobs)
      .addIndex(activeJobsByPullSecret)
      .addIndex(activePodSelectorJobsByNamespace)
      .addIndex(jobsByListOwnerUid)
      .addIndex(jobsByControllerUid);
  }

  imageListPullJobs(): Informer<ImageListPullJob> {
    return this.factory.informer<ImageListPullJob>(this.kruise.imageListPullJobs);
  }

  pods(): Informer<Pod> {
    return this.factory.informer<Pod>(core.pods).addIndex(podsByNamespace).addIndex(podsByNode);
  }

  secrets(): Informer<Secret> {
    return this.factory.informer<Secret>(core.secrets).addIndex(secretsByJobReference);
  }

  crrs(): Informer<ContainerRecreateRequest> {
    return this.factory.informer<ContainerRecreateRequest>(this.kruise.crrs).addIndex(crrsByPodUid);
  }
}
