// Group, versions, kinds and resource names of the OpenKruise API objects kruise-ts serves or reads.

export const GROUP = 'apps.kruise.io';
export const VERSION_V1ALPHA1 = 'v1alpha1';
export const VERSION_V1BETA1 = 'v1beta1';
export const API_VERSION_V1ALPHA1 = `${GROUP}/${VERSION_V1ALPHA1}` as const;
export const API_VERSION_V1BETA1 = `${GROUP}/${VERSION_V1BETA1}` as const;

export const KIND_NODE_IMAGE = 'NodeImage';
export const KIND_IMAGE_PULL_JOB = 'ImagePullJob';
export const KIND_IMAGE_LIST_PULL_JOB = 'ImageListPullJob';
export const KIND_CONTAINER_RECREATE_REQUEST = 'ContainerRecreateRequest';
export const KIND_CLONE_SET = 'CloneSet';
/** Advanced StatefulSet, served as apps.kruise.io/v1beta1. */
export const KIND_STATEFUL_SET = 'StatefulSet';

export const PLURAL_NODE_IMAGES = 'nodeimages';
export const PLURAL_IMAGE_PULL_JOBS = 'imagepulljobs';
export const PLURAL_IMAGE_LIST_PULL_JOBS = 'imagelistpulljobs';
export const PLURAL_CONTAINER_RECREATE_REQUESTS = 'containerrecreaterequests';
export const PLURAL_CLONE_SETS = 'clonesets';
export const PLURAL_STATEFUL_SETS = 'statefulsets';

const SHORT_NAME_CONTAINER_RECREATE_REQUEST = 'crr';

export interface KruiseResource {
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  /** The CustomResourceDefinition's metadata.name. */
  readonly crdName: string;
}

function resource(kind: string, plural: string, namespaced: boolean, shortNames: readonly string[] = []): KruiseResource {
  return {
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames,
    crdName: `${plural}.${GROUP}`,
  };
}

/** The four kinds whose CRDs kruise-ts installs (deploy/crds/). */
export const NODE_IMAGE_RESOURCE = resource(KIND_NODE_IMAGE, PLURAL_NODE_IMAGES, false);
export const IMAGE_PULL_JOB_RESOURCE = resource(KIND_IMAGE_PULL_JOB, PLURAL_IMAGE_PULL_JOBS, true);
export const IMAGE_LIST_PULL_JOB_RESOURCE = resource(KIND_IMAGE_LIST_PULL_JOB, PLURAL_IMAGE_LIST_PULL_JOBS, true);
export const CONTAINER_RECREATE_REQUEST_RESOURCE = resource(
  KIND_CONTAINER_RECREATE_REQUEST,
  PLURAL_CONTAINER_RECREATE_REQUESTS,
  true,
  [SHORT_NAME_CONTAINER_RECREATE_REQUEST],
);
