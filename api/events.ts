// Event reasons, event sources and event message texts, as upstream emits them (kubectl users and
// alerting rules match on these strings).

export const EVENT_TYPE_NORMAL = 'Normal';
export const EVENT_TYPE_WARNING = 'Warning';

export const REASON_PULL_IMAGE_SUCCEED = 'PullImageSucceed';
export const REASON_PULL_IMAGE_FAILED = 'PullImageFailed';
/** kruise-ts: pulls wait for image filesystem space, and when they go on again. */
export const REASON_IMAGE_FILESYSTEM_FULL = 'ImageFilesystemFull';
export const REASON_IMAGE_FILESYSTEM_FREED = 'ImageFilesystemFreed';
export const REASON_KILLING = 'Killing';
export const REASON_FAILED_PRE_STOP_HOOK = 'FailedPreStopHook';
/** Emitted by the CloneSet controller; upstream sends both of these as Normal events. */
export const REASON_CREATED_IMAGE_PULL_JOB = 'CreatedImagePullJob';
export const REASON_FAILED_CREATE_IMAGE_PULL_JOB = 'FailedCreateImagePullJob';
/** ImageListPullJob controller reasons; upstream uses these sentences (with spaces) as reasons. */
export const REASON_SUCCESSFUL_CREATE_IMAGE_PULL_JOB = 'Successful create ImagePullJob';
export const REASON_SUCCESSFUL_DELETE_IMAGE_PULL_JOB = 'Successful delete ImagePullJob';
/** kruise-ts's own Warning reasons for pre-download on a workload (upstream only logs these). */
export const REASON_INVALID_PREDOWNLOAD_ANNOTATION = 'InvalidImagePreDownloadAnnotation';
export const REASON_PREDOWNLOAD_FAILED = 'ImagePreDownloadFailed';
/** kruise-ts's own: OpenKruise beside it still does the work of these kinds (manager, daemon). */
export const REASON_OPENKRUISE_CONFLICT = 'OpenKruiseConflict';

export const EVENT_SOURCE_DAEMON_IMAGE_PULLER = 'kruise-daemon-imagepuller';
export const EVENT_SOURCE_DAEMON_CRR = 'kruise-daemon-crr';
export const EVENT_SOURCE_NODE_IMAGE_CONTROLLER = 'nodeimage-controller';
export const EVENT_SOURCE_CLONE_SET_CONTROLLER = 'cloneset-controller';
export const EVENT_SOURCE_STATEFUL_SET_CONTROLLER = 'statefulset-controller';

/** `elapsed` is a Go-style duration such as "1.5s"; "ecalpsedTime" is upstream's spelling. */
export function pullImageSucceededEventMessage(image: string, tag: string, elapsed: string): string {
  return `Image ${image}:${tag}, ecalpsedTime ${elapsed}`;
}

export function killingEventMessage(containerName: string, crrName: string): string {
  return `Stopping container ${containerName} by ContainerRecreateRequest ${crrName}`;
}

/** format.Pod of the kubelet: "<name>_<namespace>(<uid>)". */
function kubeletPodRef(pod: { name: string; namespace: string; uid: string }): string {
  return `${pod.name}_${pod.namespace}(${pod.uid})`;
}

/** The kubelet's message for a failed exec preStop hook (upstream vendors the kubelet's runner). */
export function failedExecPreStopHookMessage(command: string[], container: string, pod: { name: string; namespace: string; uid: string }, error: string, output: string): string {
  return `Exec lifecycle hook ([${command.join(' ')}]) for Container ${JSON.stringify(container)} in Pod ${JSON.stringify(kubeletPodRef(pod))} failed - error: ${error}, message: ${JSON.stringify(output)}`;
}

/** The kubelet's message for a failed httpGet preStop hook. */
export function failedHttpPreStopHookMessage(path: string, container: string, pod: { name: string; namespace: string; uid: string }, error: string, body: string): string {
  return `Http lifecycle hook (${path}) for Container ${JSON.stringify(container)} in Pod ${JSON.stringify(kubeletPodRef(pod))} failed - error: ${error}, message: ${JSON.stringify(body)}`;
}

/** tcpSocket hooks: the kubelet ignores them; kruise-ts connects and reports a refused connection. */
export function failedTcpPreStopHookMessage(address: string, container: string, pod: { name: string; namespace: string; uid: string }, error: string): string {
  return `TCP lifecycle hook (${address}) for Container ${JSON.stringify(container)} in Pod ${JSON.stringify(kubeletPodRef(pod))} failed - error: ${error}`;
}

export const EVENT_SOURCE_IMAGE_PULL_JOB_CONTROLLER = 'imagepulljob-controller';
export const EVENT_SOURCE_IMAGE_LIST_PULL_JOB_CONTROLLER = 'imagelistpulljob-controller';
/** ImagePullJob controller reasons (kruise-ts's own; upstream's job controller records no events). */
export const REASON_IMAGE_PULL_JOB_COMPLETED = 'Completed';
export const REASON_IMAGE_PULL_JOB_DEADLINE_EXCEEDED = 'DeadlineExceeded';
export const REASON_PULL_SECRET_NOT_FOUND = 'PullSecretNotFound';
export const REASON_INVALID_IMAGE = 'InvalidImage';
/** kruise-ts: a node named in selector.names has no NodeImage (upstream drops it silently). */
export const REASON_NODE_NOT_FOUND = 'NodeNotFound';

export function createdImagePullJobsEventMessage(n: number): string {
  return `Create ${n} ImagePullJob`;
}

export function deletedImagePullJobsEventMessage(n: number): string {
  return `Delete ${n} ImagePullJob`;
}
