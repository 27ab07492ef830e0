// Numeric defaults and limits of the API and of upstream's controllers, in seconds unless named
// otherwise.

/** pullPolicy.timeoutSeconds default (NodeImage tags, ImagePullJob, ImageListPullJob). */
export const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
/** pullPolicy.backoffLimit default: retries after the first attempt. */
export const DEFAULT_PULL_BACKOFF_LIMIT = 3;
/** ImagePullJob parallelism when unset; applied by the controller, not stored by the webhook. */
export const DEFAULT_PARALLELISM = 1;

export const MAX_IMAGES_PER_NODE_IMAGE = 256;
export const MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB = 255;
/** Smallest CRR spec.activeDeadlineSeconds the webhook accepts. */
export const MIN_CRR_ACTIVE_DEADLINE_SECONDS = 3;

/** A tag without a status this long after createdAt is failed by the NodeImage controller. */
export const NODE_IMAGE_RESPONSE_TIMEOUT_SECONDS = 600;
/** A new Node gets its NodeImage once it has been Ready this long. */
export const NODE_IMAGE_CREATION_DELAY_SECONDS = 30;
/** A CRR with no phase this long after creation is completed by the manager. */
export const CRR_DAEMON_RESPONSE_TIMEOUT_SECONDS = 60;
/** Grace period of a CRR kill when neither the CRR nor the pod gives one. */
export const DEFAULT_CRR_TERMINATION_GRACE_SECONDS = 30;
/** StopContainer never gets less than this, whatever the grace period says. */
export const MIN_CRR_STOP_GRACE_SECONDS = 2;
/**
 * How long the runtime may take beyond the grace period to answer StopContainer: the kubelet's
 * --runtime-request-timeout default, which it adds to the grace period for this call (kubernetes
 * pkg/kubelet/cri/remote/remote_runtime.go, StopContainer). containerd answers a stop only once it
 * has handled the container's exit: with 25 containers stopped at once on a busy 2-core node some
 * answers took longer than 30 s, and a 30 s deadline gave up on stops that were going through and
 * sent them again.
 */
export const CRI_STOP_RUNTIME_TIMEOUT_SECONDS = 120;

/** Always jobs: extra TTL the NodeImage tag keeps after the job's own TTL (plus up to 300s jitter). */
export const ALWAYS_NODE_IMAGE_TTL_EXTRA_SECONDS = 300;
export const ALWAYS_NODE_IMAGE_TTL_JITTER_SECONDS = 300;
/** Never jobs: the tag expires about a day after completion, which triggers the next pull round. */
export const NEVER_NODE_IMAGE_TTL_SECONDS = 86400;
export const NEVER_NODE_IMAGE_TTL_JITTER_SECONDS = 600;
/** Never jobs: a tag's activeDeadlineSeconds is at least this (or the pull timeout if longer). */
export const NEVER_NODE_IMAGE_MIN_DEADLINE_SECONDS = 1800;

/** CloneSet image pre-download: values of the ImagePullJobs it creates. */
export const PREDOWNLOAD_DEFAULT_PARALLELISM = 1;
export const PREDOWNLOAD_DEFAULT_TIMEOUT_SECONDS = 300;
export const PREDOWNLOAD_BACKOFF_LIMIT = 1;
export const PREDOWNLOAD_TTL_SECONDS_AFTER_FINISHED = 600;
/** Pre-download is skipped for workloads this small or smaller. */
export const PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE = 3;
/** CloneSet maxUnavailable default when resolving whether an update happens in one batch. */
export const CLONE_SET_DEFAULT_MAX_UNAVAILABLE = '20%';

export const MAX_INT32 = 2147483647;
export const MIN_INT32 = -2147483648;

/**
 * A tag without a status this long after createdAt is failed early when its Node had already
 * stopped being Ready before the tag was written (upstream waits the full response timeout).
 */
export const NODE_NOT_READY_RESPONSE_TIMEOUT_SECONDS = 60;
/** The NodeImage controller fails a tag this long after createdAt + its activeDeadlineSeconds. */
export const NODE_IMAGE_DEADLINE_GRACE_SECONDS = 600;
/**
 * An Always ImagePullJob that matches no node waits this long for one (a pod being scheduled, a
 * NodeImage being created) before completing; upstream completes such a job at once.
 */
export const EMPTY_JOB_GRACE_SECONDS = 60;
