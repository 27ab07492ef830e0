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
import type { ResourceType } from './resource.js';

function v1alpha1(r: KruiseResource): ResourceType {
  return { group: GROUP, version: VERSION_V1ALPHA1, plural: r.plural, kind: r.kind, namespaced: r.namespaced };
}

/** OpenKruise resource types as the REST layer addresses them. */
export const kruise = {
  nodeImages: v1alpha1(NODE_IMAGE_RESOURCE),
  imagePullJobs: v1alpha1(IMAGE_PULL_JOB_RESOURCE),
  imageListPullJobs: v1alpha1(IMAGE_LIST_PULL_JOB_RESOURCE),
  crrs: v1alpha1(CONTAINER_RECREATE_REQUEST_RESOURCE),
  cloneSets: { group: GROUP, version: VERSION_V1ALPHA1, plural: PLURAL_CLONE_SETS, kind: KIND_CLONE_SET, namespaced: true },
  statefulSets: { group: GROUP, version: VERSION_V1BETA1, plural: PLURAL_STATEFUL_SETS, kind: KIND_STATEFUL_SET, namespaced: true },
} as const satisfies Record<string, ResourceType>;
