import { createHash } from 'node:crypto';
import { CriError } from '../cri/errors.js';
import type { CriClient } from '../cri/client.js';
import { parseReference, pullString } from '../../api/image-reference.js';
import type { AuthConfig } from '../../proto/gen/runtime/v1/AuthConfig.js';
import type { PodSandboxConfig } from '../../proto/gen/runtime/v1/PodSandboxConfig.js';
import { ANNOTATION_PULLING_IMAGE_BY, PULLING_IMAGE_BY_KRUISE_DAEMON } from '../../api/metadata-keys.js';
import { MESSAGE_PULL_DEADLINE_EXCEEDED } from '../../api/messages.js';
import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS } from '../../api/limits.js';
import { formatTime } from '../../api/time.js';
import type { SandboxConfig } from '../../api/types/common.js';
import type { ImagePullPolicy } from '../../api/enums.js';
import { CredentialError, type RegistryAuth } from './credentials.js';
import { fetchImageLayers } from './manifest.js';
import type { ProgressPoller } from './progress.js';
import type { TagState } from './state.js';
import { sleep } from '../../kube/informer.js';

const TRACK_AFTER_MS = 3000;
const BACKOFF_MAX_MS = 30_000;

export interface PullTask {
  image: string;
  tag: string;
  version: number;
  /** What to hand to the runtime: name:tag, or name@digest when the tag is a digest. */
  ref: string;
  timeoutSeconds?: number;
  backoffLimit?: number;
  activeDeadlineSeconds?: number;
  imagePullPolicy?: ImagePullPolicy;
  sandboxConfig?: SandboxConfig;
}

export interface PullOutcome {
  phase: 'Succeeded' | 'Failed';
  message?: string;
  imageID?: string;
  /** Why it failed, for metrics: a CRI error kind, "deadline", "disk", "credentials". */
  reason?: string;
  bytes: number;
  attempts: number;
}

/**
 * Joins identical pulls in flight (same normalised reference and credentials) into one runtime call:
 * the same image requested twice at once is downloaded once. A caller that gives up only detaches;
 * the call is cancelled when the last caller is gone.
 */
export class SharedPulls {
  private readonly inflight = new Map<string, { result: Promise<string>; abort: AbortController; users: number }>();

  constructor(private readonly cri: CriClient) {}

  pull(ref: string, auth: AuthConfig | undefined, sandbox: PodSandboxConfig, timeoutMs: number, signal: AbortSignal): Promise<string> {
    const normalized = pullString(parseReference(ref));
    const who = auth ? createHash('sha256').update(`${auth.username ?? ''}\u0000${auth.password ?? ''}`).digest('hex') : '';
    const key = `${normalized}\u0000${who}`;
    let entry = this.inflight.get(key);
    if (!entry) {
      const abort = new AbortController();
      const created = { abort, users: 0, result: this.cri.pullImage(normalized, auth, sandbox, { timeoutMs, signal: abort.signal }) };
      this.inflight.set(key, created);
      void created.result.then(
        () => this.inflight.delete(key),
        () => this.inflight.delete(key),
      );
      entry = created;
    }
    const shared = entry;
    shared.users++;
    return new Promise<string>((resolve, reject) => {
      const detach = (): void => {
        signal.removeEventListener('abort', onAbort);
        shared.users--;
      };
      const onAbort = (): void => {
        detach();
        if (shared.users === 0) shared.abort.abort();
        reject(new CriError('cancelled', 'PullImage', undefined, 'pull cancelled'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      shared.result.then(
        (v) => {
          detach();
          resolve(v);
        },
        (e: unknown) => {
          detach();
          reject(e);
        },
      );
    });
  }
}

export interface WorkerDeps {
  cri: CriClient;
  shared: SharedPulls;
  progress?: ProgressPoller | undefined;
  /** Returns a refusal message when the disk is too full to pull. */
  diskCheck: () => Promise<string | undefined>;
  /** Credentials to try for the task's registry, in order; throws CredentialError on bad secrets. */
  auths: () => Promise<RegistryAuth[]>;
  /** Retry backoff start (1 s), doubling up to BACKOFF_MAX_MS. */
  backoffBaseMs?: number | undefined;
}

export type StateUpdate = (patch: Partial<TagState>) => void;

const kindText: Record<string, string> = {
  'not-found': 'image not found in the registry',
  unauthorized: 'the registry refused the credentials',
  'registry-unreachable': 'registry unreachable',
  deadline: 'pull attempt timed out',
  cancelled: 'pull cancelled',
  unavailable: 'container runtime unavailable',
  unimplemented: 'container runtime does not implement PullImage',
  other: 'pull failed',
};

function describe(err: unknown, timeoutSeconds: number): { message: string; reason: string; permanent: boolean } {
  if (err instanceof CredentialError) return { message: err.message, reason: 'credentials', permanent: true };
  if (err instanceof CriError) {
    const text = err.kind === 'deadline' ? `${kindText['deadline']} after ${timeoutSeconds}s` : kindText[err.kind];
    // A missing image or refused credentials will not change by retrying at once.
    return { message: `${text}: ${err.details}`, reason: err.kind, permanent: err.kind === 'not-found' || err.kind === 'unauthorized' };
  }
  return { message: err instanceof Error ? err.message : String(err), reason: 'other', permanent: false };
}

function toAuth(a: RegistryAuth): AuthConfig {
  return { username: a.username, password: a.password };
}

/**
 * Pulls one image tag to completion: IfNotPresent short-cut, credentials tried in order, a CRI
 * deadline per attempt, `backoffLimit` retries with 1 s doubling backoff, the whole tag bounded by
 * activeDeadlineSeconds, byte progress while it runs. Cancelling `signal` stops it without a result.
 */
export async function runPull(task: PullTask, deps: WorkerDeps, update: StateUpdate, signal: AbortSignal): Promise<PullOutcome | undefined> {
  const started = new Date();
  const timeoutSeconds = task.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  const backoffLimit = task.backoffLimit !== undefined && task.backoffLimit >= 0 ? task.backoffLimit : DEFAULT_PULL_BACKOFF_LIMIT;
  const deadline = task.activeDeadlineSeconds ? started.getTime() + task.activeDeadlineSeconds * 1000 : undefined;
  update({ phase: 'Pulling', startTime: formatTime(started), progress: 0 });

  const fail = (message: string, reason: string, attempts: number): PullOutcome => ({ phase: 'Failed', message, reason, bytes: 0, attempts });

  if (task.imagePullPolicy === 'IfNotPresent') {
    try {
      const st = await deps.cri.image('ImageStatus', { image: { image: task.ref } }, { signal });
      if (st.image?.id) return { phase: 'Succeeded', imageID: `${task.image}@${st.image.id}`, bytes: 0, attempts: 0 };
    } catch (err) {
      if (signal.aborted) return undefined;
      if (!(err instanceof CriError && err.kind === 'not-found')) throw err;
    }
  }

  let last = { message: '', reason: 'other' };
  let attempts = 0;
  for (let i = 0; i <= backoffLimit; i++) {
    if (signal.aborted) return undefined;
    let budgetMs = timeoutSeconds * 1000;
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return fail(MESSAGE_PULL_DEADLINE_EXCEEDED, 'deadline', attempts);
      budgetMs = Math.min(budgetMs, left);
    }
    const full = await deps.diskCheck();
    if (full) return fail(full, 'disk', attempts);
    attempts++;
    try {
      const auths = await deps.auths();
      const { imageRef, bytes } = await pullOnce(task, auths, budgetMs, deps, update, signal);
      return { phase: 'Succeeded', imageID: `${task.image}@${imageRef}`, bytes, attempts };
    } catch (err) {
      if (signal.aborted) return undefined;
      const d = describe(err, Math.round(budgetMs / 1000));
      last = d;
      if (d.permanent) return fail(d.message, d.reason, attempts);
      update({ message: `attempt ${attempts} of ${backoffLimit + 1} failed: ${d.message}` });
    }
    if (i < backoffLimit) {
      const wait = Math.min(BACKOFF_MAX_MS, (deps.backoffBaseMs ?? 1_000) * 2 ** i);
      await sleep(deadline !== undefined ? Math.max(0, Math.min(wait, deadline - Date.now())) : wait, signal);
    }
  }
  if (deadline !== undefined && deadline <= Date.now()) return fail(MESSAGE_PULL_DEADLINE_EXCEEDED, 'deadline', attempts);
  return fail(last.message, last.reason, attempts);
}

async function pullOnce(
  task: PullTask,
  auths: RegistryAuth[],
  budgetMs: number,
  deps: WorkerDeps,
  update: StateUpdate,
  signal: AbortSignal,
): Promise<{ imageRef: string; bytes: number }> {
  const sandbox = {
    labels: task.sandboxConfig?.labels ?? {},
    annotations: { ...(task.sandboxConfig?.annotations ?? {}), [ANNOTATION_PULLING_IMAGE_BY]: PULLING_IMAGE_BY_KRUISE_DAEMON },
  };
  // The layer list is fetched beside the pull, never before it: progress must not cost time.
  const trackAbort = new AbortController();
  const onAbort = (): void => trackAbort.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const tracking = deps.progress ? startTracking(task.ref, auths, deps.progress, update, trackAbort.signal) : Promise.resolve(undefined);
  const deadline = Date.now() + budgetMs;
  try {
    // Credentials in keyring order; the first that works wins. No anonymous fallback once some match.
    const tries: Array<AuthConfig | undefined> = auths.length > 0 ? auths.map(toAuth) : [undefined];
    let lastErr: unknown;
    for (const auth of tries) {
      try {
        const imageRef = await deps.shared.pull(task.ref, auth, sandbox, Math.max(1, deadline - Date.now()), signal);
        trackAbort.abort();
        const st = await deps.cri.image('ImageStatus', { image: { image: imageRef } }).catch(() => undefined);
        return { imageRef, bytes: Number(st?.image?.size ?? 0) };
      } catch (err) {
        lastErr = err;
        if (!(err instanceof CriError && err.kind === 'unauthorized')) throw err;
      }
    }
    throw lastErr;
  } finally {
    trackAbort.abort();
    signal.removeEventListener('abort', onAbort);
    void tracking.then((t) => t?.stop());
  }
}

async function startTracking(
  ref: string,
  auths: RegistryAuth[],
  poller: ProgressPoller,
  update: StateUpdate,
  signal: AbortSignal,
): Promise<{ stop: () => void } | undefined> {
  // Most pulls finish within seconds; only the ones still running after that are worth the
  // registry round trip for the layer list.
  await sleep(TRACK_AFTER_MS, signal);
  if (signal.aborted) return undefined;
  const release = poller.reserve();
  // Every slot taken: this pull reports 0, then 100, like a runtime without the content API.
  if (!release) return undefined;
  try {
    const layers = await fetchImageLayers(pullString(parseReference(ref)), auths, { signal, timeoutMs: 10_000 });
    const tracked = await poller.track(layers.layers, (p) => update({ progress: p }));
    return {
      stop: () => {
        tracked.stop();
        release();
      },
    };
  } catch {
    // Without the layer list there is no byte progress; the pull itself goes on (0, then 100).
    release();
    return undefined;
  }
}
