// Label, annotation, finalizer and condition names shared with upstream OpenKruise; they are wire
// format, so every spelling (including upstream's typos) must stay exactly as it is.

// Labels
export const LABEL_CRR_NODE_NAME = 'crr.apps.kruise.io/node-name';
export const LABEL_CRR_POD_UID = 'crr.apps.kruise.io/pod-uid';
export const LABEL_CRR_ACTIVE = 'crr.apps.kruise.io/active';
export const LABEL_CRR_ACTIVE_VALUE = 'true';
/** Node label (also copied onto CRRs) marking virtual-kubelet nodes, which have no kruise-daemon. */
export const LABEL_VIRTUAL_KUBELET_KEY = 'type';
export const LABEL_VIRTUAL_KUBELET_VALUE = 'virtual-kubelet';
/** Test hook: the NodeImage controller keeps such a NodeImage although no Node of that name exists. */
export const LABEL_FAKE_NODE_IMAGE = 'apps.kruise.io/fake-nodeimage';
/** Upstream spells it with a double "pre". */
export const LABEL_PRE_PREDOWNLOAD_CREATED = 'apps.kruise.io/pre-predownload-created';
export const LABEL_IMAGE_PREDOWNLOAD_IGNORED = 'apps.kruise.io/image-predownload-ignored';
/** On pods: the name of their ControllerRevision (apps/v1 ControllerRevisionHashLabelKey). */
export const LABEL_CONTROLLER_REVISION_HASH = 'controller-revision-hash';
/** On ControllerRevisions: the hash of their data (k8s.io/kubernetes/pkg/controller/history). */
export const LABEL_REVISION_DATA_HASH = 'controller.kubernetes.io/hash';
/** On secret copies in the daemon config namespace (v1.8 sync model). */
export const LABEL_SECRET_SOURCE_UID = 'imagepulljobs.kruise.io/source-uid';

// Annotations
export const ANNOTATION_PREDOWNLOAD_PARALLELISM = 'apps.kruise.io/image-predownload-parallelism';
export const ANNOTATION_PREDOWNLOAD_TIMEOUT_SECONDS = 'apps.kruise.io/image-predownload-timeout-seconds';
export const ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS = 'apps.kruise.io/image-predownload-min-updated-ready-pods';
export const ANNOTATION_CRR_SYNC_CONTAINER_STATUSES = 'crr.apps.kruise.io/sync-container-statuses';
export const ANNOTATION_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';
export const ANNOTATION_SECRET_SOURCE_KEY = 'imagepulljobs.kruise.io/source-key';
export const ANNOTATION_SECRET_REFERENCES = 'imagepulljobs.kruise.io/references';
export const ANNOTATION_SECRET_MODE = 'imagepulljobs.kruise.io/mode';
export const SECRET_MODE_BATCH = 'batch';
/** Added to the sandbox config of every CRI PullImage call the daemon makes. */
export const ANNOTATION_PULLING_IMAGE_BY = 'apps.kruise.io/pulling-image-by';
export const PULLING_IMAGE_BY_KRUISE_DAEMON = 'kruise-daemon';

// Finalizers
export const FINALIZER_DELETION_PROTECTION = 'apps.kruise.io/deletion-protection';
export const FINALIZER_CRR_UNREADY_ACQUIRED = 'crr.apps.kruise.io/unready-acquired';

// Pod conditions
/** Readiness-gate condition; its message is a JSON list of {userAgent, key} holders. */
export const CONDITION_KRUISE_POD_READY = 'KruisePodReady';
export const POD_READY_USER_AGENT_CRR = 'ContainerRecreateRequest';
/** Pods the sidecar terminator finished may still get CRRs although they are no longer active. */
export const CONDITION_SIDECAR_TERMINATED = 'SidecarTerminated';
/**
 * CRR v1beta1 condition (upstream's main branch, #2458): the pod was made not-ready for
 * unreadyGracePeriodSeconds at its lastTransitionTime; v1alpha1 keeps the time in
 * ANNOTATION_CRR_UNREADY_ACQUIRED.
 */
export const CONDITION_CRR_POD_UNREADY_ACQUIRED = 'PodUnreadyAcquired';
/** kruise-ts: NodeImage condition while pulls on the node wait for image filesystem space. */
export const CONDITION_IMAGE_FILESYSTEM_FULL = 'ImageFilesystemFull';
export const REASON_CRR_UNREADY_ACQUIRED = 'UnreadyAcquired';
export const MESSAGE_CRR_UNREADY_ACQUIRED = 'Pod has been forced to not-ready for unreadyGracePeriodSeconds drain';

// Secret types (and their data keys) the daemon takes registry credentials from
export const SECRET_TYPE_DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const SECRET_KEY_DOCKER_CONFIG_JSON = '.dockerconfigjson';
export const SECRET_TYPE_DOCKERCFG = 'kubernetes.io/dockercfg';
export const SECRET_KEY_DOCKERCFG = '.dockercfg';

