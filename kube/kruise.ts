import { crrToV1alpha1, crrToV1beta1 } from '../api/crr-conversion.js';
import {
  CONTAINER_RECREATE_REQUEST_RESOURCE,
  GROUP,
  IMAGE_LIST_PULL_JOB_RESOURCE,
  IMAGE_PULL_JOB_RESOURCE,
  KIND_CLONE_SET,
  KIND_STATEFUL_SET,
  NODE_IMAGE_RESOURCE,
  PLURAL_CLONE_SETS,
  PLURAL_STATEFUL_SETS,
  VERSION_V1ALPHA1,
  VERSION_V1BETA1,
  type KruiseResource,
} from '../api/group-version.js';
import type { KubeObject } from '../api/types/common.js';
import type { ContainerRecreateRequest } from '../api/types/containerrecreaterequest.js';
import { ApiError, type RestClient } from './rest.js';
import type { Codec, ResourceType } from './resource.js';

/** The OpenKruise kinds kruise-ts reads and writes, each in the version it talks to the cluster. */
export interface KruiseApi {
  nodeImages: ResourceType;
  imagePullJobs: ResourceType;
  imageListPullJobs: ResourceType;
  crrs: ResourceType;
  cloneSets: ResourceType;
  statefulSets: ResourceType;
}

function typeOf(r: KruiseResource, version: string, codec?: Codec): ResourceType {
  return { group: GROUP, version, plural: r.plural, kind: r.kind, namespaced: r.namespaced, ...(codec ? { codec } : {}) };
}

/**
 * kruise-ts works with v1beta1 ContainerRecreateRequests; a cluster that serves only v1alpha1
 * (OpenKruise up to v1.9 installed the CRD) keeps two of their status fields in annotations.
 */
const crrV1alpha1Codec: Codec = {
  decode: (o: KubeObject) => crrToV1beta1(o as ContainerRecreateRequest),
  encode: (o: KubeObject) => crrToV1alpha1(o as ContainerRecreateRequest),
};

const kinds = {
  nodeImages: NODE_IMAGE_RESOURCE,
  imagePullJobs: IMAGE_PULL_JOB_RESOURCE,
  imageListPullJobs: IMAGE_LIST_PULL_JOB_RESOURCE,
  crrs: CONTAINER_RECREATE_REQUEST_RESOURCE,
} as const;

const workloads = {
  cloneSets: { group: GROUP, version: VERSION_V1ALPHA1, plural: PLURAL_CLONE_SETS, kind: KIND_CLONE_SET, namespaced: true },
  statefulSets: { group: GROUP, version: VERSION_V1BETA1, plural: PLURAL_STATEFUL_SETS, kind: KIND_STATEFUL_SET, namespaced: true },
} as const satisfies Record<string, ResourceType>;

export type KruiseVersions = Record<keyof typeof kinds, typeof VERSION_V1ALPHA1 | typeof VERSION_V1BETA1>;

/** The kinds in the given versions; a v1alpha1 ContainerRecreateRequest is converted on the way in and out. */
export function kruiseApiFor(versions: KruiseVersions): KruiseApi {
  const at = (r: KruiseResource, version: string): ResourceType =>
    typeOf(r, version, r === CONTAINER_RECREATE_REQUEST_RESOURCE && version === VERSION_V1ALPHA1 ? crrV1alpha1Codec : undefined);
  return {
    nodeImages: at(kinds.nodeImages, versions.nodeImages),
    imagePullJobs: at(kinds.imagePullJobs, versions.imagePullJobs),
    imageListPullJobs: at(kinds.imageListPullJobs, versions.imageListPullJobs),
    crrs: at(kinds.crrs, versions.crrs),
    ...workloads,
  };
}

/** The kinds as deploy/crds serves them: v1beta1, the storage version (as upstream since v1.9). */
export const kruise: KruiseApi = kruiseApiFor({ nodeImages: VERSION_V1BETA1, imagePullJobs: VERSION_V1BETA1, imageListPullJobs: VERSION_V1BETA1, crrs: VERSION_V1BETA1 });

/** The plurals <group>/<version> serves (apps.kruise.io by default); empty when the version is not served. */
export async function servedPlurals(rest: RestClient, version: string, group: string = GROUP): Promise<Set<string>> {
  try {
    const list = await rest.request<{ resources?: Array<{ name: string }> }>('GET', `/apis/${group}/${version}`, { timeoutMs: 10_000 });
    return new Set((list.resources ?? []).map((r) => r.name));
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return new Set();
    throw err;
  }
}

/**
 * Each kind in the newest version the cluster serves (v1beta1, else v1alpha1), so kruise-ts runs on
 * its own CRDs and on OpenKruise's (v1.8: v1alpha1 only; v1.9: ContainerRecreateRequest v1alpha1
 * only). Kinds whose CRD is missing are in `missing`.
 */
export async function discoverKruise(rest: RestClient): Promise<{ api: KruiseApi; versions: KruiseVersions; missing: string[] }> {
  const [beta, alpha] = await Promise.all([servedPlurals(rest, VERSION_V1BETA1), servedPlurals(rest, VERSION_V1ALPHA1)]);
  const missing = Object.values(kinds)
    .filter((r) => !beta.has(r.plural) && !alpha.has(r.plural))
    .map((r) => r.kind);
  const pick = (r: KruiseResource): KruiseVersions[keyof KruiseVersions] => (beta.has(r.plural) ? VERSION_V1BETA1 : VERSION_V1ALPHA1);
  const versions: KruiseVersions = {
    nodeImages: pick(kinds.nodeImages),
    imagePullJobs: pick(kinds.imagePullJobs),
    imageListPullJobs: pick(kinds.imageListPullJobs),
    crrs: pick(kinds.crrs),
  };
  return { api: kruiseApiFor(versions), versions, missing };
}
