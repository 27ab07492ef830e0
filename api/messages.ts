// Status message texts written into object status, exactly as upstream writes them (users and
// tools read them to tell why something finished).

// ContainerRecreateRequest, manager
export const MESSAGE_CRR_POD_GONE = 'pod has gone';
export const MESSAGE_CRR_DAEMON_NOT_RESPONDED = 'daemon has not responded for a long time';
export const MESSAGE_CRR_DEADLINE_EXCEEDED = 'recreating has exceeded the activeDeadlineSeconds';

// ContainerRecreateRequest, daemon
export const MESSAGE_CRR_CONTAINER_NOT_FOUND_ON_NODE = 'not found container on Node';

export function crrKillErrorMessage(error: string): string {
  return `kill container error: ${error}`;
}

export function crrRuntimeNotFoundMessage(error: string): string {
  return `failed to find runtime service: ${error}`;
}

// NodeImage tag status
export const MESSAGE_NODE_NOT_RESPONDED = 'node has not responded for a long time';
export const MESSAGE_PULL_DEADLINE_EXCEEDED = 'pulling exceeds the activeDeadlineSeconds';
/** kruise-ts's own, while a tag pulls: the layer list could not be read, so progress stays at 0 until done. */
export const MESSAGE_PROGRESS_UNKNOWN = 'byte progress unknown';

// ImagePullJob status
export const MESSAGE_JOB_COMPLETED = 'job has completed';
const MESSAGE_JOB_NO_PROGRESS = 'job is running, no progress';
export const MESSAGE_JOB_DEADLINE_EXCEEDED = 'job exceeds activeDeadlineSeconds';

/**
 * A job's share of its image's bytes across its nodes, in percent: a finished node (succeeded or
 * failed) counts in full, a node still pulling counts its byte percentage (`pullingPercent` is the
 * sum of those), any other node nothing. With nothing in flight it is upstream's finished-over-desired.
 */
export function jobProgressPercent(finished: number, pullingPercent: number, desired: number): number {
  if (desired <= 0) return 0;
  return Math.min(100, (100 * finished + Math.max(0, pullingPercent)) / desired);
}

/**
 * "job is running, progress 12.5%", one decimal like Go's %.1f. Upstream's figure counts finished
 * nodes only (imagepulljob_controller.go calculateStatus), so a job of one large image sat at 0 %
 * until a node finished; nodes still pulling add their byte share (jobProgressPercent).
 */
export function jobProgressMessage(succeeded: number, failed: number, desired: number, pullingPercent = 0): string {
  if (desired <= 0) return MESSAGE_JOB_NO_PROGRESS;
  return `job is running, progress ${formatOneDecimal(jobProgressPercent(succeeded + failed, pullingPercent, desired))}%`;
}

// Go's %.1f rounds an exact binary tie to the even tenth (12.25 -> 12.2, 0.75 -> 0.8) where
// toFixed rounds it up; ties at tenths are exactly the values ending in .25 or .75.
function formatOneDecimal(x: number): string {
  if (Number.isInteger(x * 4) && !Number.isInteger(x * 2)) {
    const whole = Math.floor(x);
    return (whole + (x - whole === 0.25 ? 0.2 : 0.8)).toFixed(1);
  }
  return x.toFixed(1);
}

/** Per-container message while the daemon stops a container; names the instance being stopped. */
export function crrStoppingMessage(containerID: string, graceSeconds: number): string {
  return `stopping container ${containerID} (grace ${graceSeconds}s)`;
}

/** The instance a crrStoppingMessage names. */
export function crrStopRecord(message: string | undefined): { containerID: string } | undefined {
  const id = /^stopping container (\S+) \(grace \d+s\)$/.exec(message ?? '')?.[1];
  return id !== undefined ? { containerID: id } : undefined;
}

/** Containers left unfinished because another one failed under failurePolicy Fail. */
export function crrAbandonedMessage(failedContainer: string): string {
  return `abandoned: container ${failedContainer} failed and failurePolicy is Fail`;
}

/** Top-level message of a completed CRR some of whose containers were not recreated. */
export function crrFailedContainersMessage(names: string[]): string {
  return `containers not recreated: ${names.join(', ')}`;
}


/** A node whose NodeImage is full: the job's image cannot be added there, so the node fails. */
/** A named node without a NodeImage, as the job's event says it. */
export function nodeNotFoundMessage(node: string): string {
  return `node ${node} named in spec.selector.names does not exist (it has no NodeImage): counted as failed`;
}

const MAX_NAMED_IN_MESSAGE = 5;

/** The job's status message, naming the nodes it counts as failed because they do not exist. */
export function withMissingNodes(message: string, missing: readonly string[]): string {
  if (missing.length === 0) return message;
  const shown = missing.slice(0, MAX_NAMED_IN_MESSAGE).join(', ');
  const more = missing.length > MAX_NAMED_IN_MESSAGE ? ` and ${missing.length - MAX_NAMED_IN_MESSAGE} more` : '';
  return `${message}; no such node: ${shown}${more}`;
}

export function nodeImageFullMessage(node: string, image: string, limit: number): string {
  return `node ${node}: cannot add image ${image}, its NodeImage already holds ${limit} images (the most a NodeImage may hold)`;
}

export function jobCompletedEventMessage(succeeded: number, failed: number, desired: number): string {
  return `job has completed: ${succeeded} of ${desired} nodes succeeded, ${failed} failed`;
}

export function jobDeadlineEventMessage(deadlineSeconds: number, unfinished: number): string {
  return `job exceeds activeDeadlineSeconds (${deadlineSeconds}s): ${unfinished} nodes unfinished are counted as failed`;
}

export function pullSecretNotFoundMessage(namespace: string, name: string): string {
  return `pull secret ${namespace}/${name} not found; nodes pull without it`;
}

// ImageListPullJob status
export function failedImageStatusMessage(imagePullJob: string): string {
  return `Please check for details which nodes failed by 'kubectl get ImagePullJob ${imagePullJob}'.`;
}
