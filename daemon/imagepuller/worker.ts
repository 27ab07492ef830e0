import { createHash } from 'node:crypto';
import { CriError, definiteRegistryAnswer } from '../cri/errors.js';
import type { CriClient } from '../cri/client.js';
import { parseReference, pullString } from '../../api/image-reference.js';
import type { AuthConfig } from '../../proto/gen/runtime/v1/AuthConfig.js';
import type { PodSandboxConfig } from '../../proto/gen/runtime/v1/PodSandboxConfig.js';
import { ANNOTATION_PULLING_IMAGE_BY, PULLING_IMAGE_BY_KRUISE_DAEMON } from '../../api/metadata-keys.js';
import { MESSAGE_PROGRESS_UNKNOWN, MESSAGE_PULL_DEADLINE_EXCEEDED } from '../../api/messages.js';
import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS } from '../../api/limits.js';
import { formatTime } from '../../api/time.js';
import type { SandboxConfig } from '../../api/types/common.js';
import type { ImagePullPolicy } from '../../api/enums.js';
import { CredentialError, type RegistryAuth } from './credentials.js';
import { fetchImageLayers } from './manifest.js';
import type { RegistryHosts } from './registryhosts.js';
import type { ProgressPoller } from './progress.js';
import type { TagState } from './state.js';
import { sleep } from '../../kube/informer.js';
import { errorMessage } from '../../kube/log.js';

const TRACK_AFTER_MS = 3000;
const BACKOFF_MAX_MS = 30_000;
/** A local socket costs nothing to try: a runtime that is down is looked for at least this often. */
const RUNTIME_RECHECK_MAX_MS = 5_000;
/** How often a pull waiting for disk space looks again (the guard itself looks at most every 5 s). */
const DISK_RECHECK_MS = 5_000;

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
  /** The tag's shared end (ms since the epoch): manager and daemon fail it then (api/nodeimage.ts). */
  endMs?: number;
  /**
   * The tag's policy as the spec says now: an edited job's timeoutSeconds and backoffLimit apply
   * to the attempts that have not started yet (upstream keeps the first ones, kruise#2221).
   */
  currentPolicy?: () => { timeoutSeconds?: number; backoffLimit?: number };
}

export interface PullOutcome {
  phase: 'Succeeded' | 'Failed';
  message?: string;
  imageID?: string;
  /** Why it failed, for metrics: a CRI error kind, "deadline", "disk", "credentials". */
  reason?: string;
  /**
   * The runtime's reference of an image this pull downloaded. Its size (for the bytes metric) is
   * asked for once the result is on its way: the extra runtime call must not delay the status.
   */
  pulledRef?: string;
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
      // Not waiting for a connection: a runtime that is down must answer at once (the worker then
      // waits for it without using up attempts), not after the whole pull deadline.
      const created = { abort, users: 0, result: this.cri.pullImage(normalized, auth, sandbox, { timeoutMs, signal: abort.signal, waitForReady: false }) };
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
  /** Told that a pull waits for disk space (the refusal), or that the disk let one go on (undefined). */
  onDiskWait?: ((refusal: string | undefined) => void) | undefined;
  /** Credentials to try for the task's registry, in order; throws CredentialError on bad secrets. */
  auths: () => Promise<RegistryAuth[]>;
  /** Retry backoff start (1 s), doubling up to BACKOFF_MAX_MS. */
  backoffBaseMs?: number | undefined;
  /** Where containerd reads a registry's manifests (its hosts.toml); the registry itself without. */
  registryHosts?: ((registry: string) => RegistryHosts) | undefined;
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

type Verdict = { message: string; reason: string } & ({ kind: 'permanent' } | { kind: 'retry' } | { kind: 'runtime-down' });

function describe(err: unknown, timeoutSeconds: number): Verdict {
  if (err instanceof CredentialError) return { message: err.message, reason: 'credentials', kind: 'permanent' };
  if (err instanceof CriError) {
    const text = err.kind === 'deadline' ? `${kindText['deadline']} after ${timeoutSeconds}s` : kindText[err.kind];
    const message = `${text}: ${err.details}`;
    // Only the registry's word on the image itself will not change by retrying.
    if (definiteRegistryAnswer(err)) return { message, reason: err.kind, kind: 'permanent' };
    // A runtime that is down (restarting, a node upgrade) says nothing about the image: its time
    // does not count against backoffLimit.
    if (err.kind === 'unavailable') return { message, reason: err.kind, kind: 'runtime-down' };
    return { message, reason: err.kind, kind: 'retry' };
  }
  return { message: err instanceof Error ? err.message : String(err), reason: 'other', kind: 'retry' };
}

function toAuth(a: RegistryAuth): AuthConfig {
  return { username: a.username, password: a.password };
}

/** The tag's end: activeDeadlineSeconds from the pull's start, and never past the shared end of the tag. */
function endOf(task: PullTask, startedMs: number): number | undefined {
  const ends = [task.activeDeadlineSeconds ? startedMs + task.activeDeadlineSeconds * 1000 : undefined, task.endMs].filter((e): e is number => e !== undefined);
  return ends.length > 0 ? Math.min(...ends) : undefined;
}

/**
 * Pulls one image tag to completion: IfNotPresent short-cut, credentials tried in order, a CRI
 * deadline per attempt, `backoffLimit` retries with 1 s doubling backoff, the whole tag bounded by
 * activeDeadlineSeconds, byte progress while it runs. Waiting for the runtime to come back or for
 * disk space costs no attempt; only the registry's definite answer about the image fails at once.
 * Cancelling `signal` stops it without a result.
 */
export async function runPull(task: PullTask, deps: WorkerDeps, update: StateUpdate, signal: AbortSignal): Promise<PullOutcome | undefined> {
  const started = new Date();
  const policy = (): { timeoutSeconds: number; backoffLimit: number } => {
    const p = task.currentPolicy?.() ?? task;
    return {
      timeoutSeconds: p.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS,
      backoffLimit: p.backoffLimit !== undefined && p.backoffLimit >= 0 ? p.backoffLimit : DEFAULT_PULL_BACKOFF_LIMIT,
    };
  };
  const deadline = endOf(task, started.getTime());
  const backoffMs = (n: number): number => Math.min(BACKOFF_MAX_MS, (deps.backoffBaseMs ?? 1_000) * 2 ** n);
  update({ phase: 'Pulling', startTime: formatTime(started), progress: 0 });

  const fail = (message: string, reason: string, attempts: number): PullOutcome => ({ phase: 'Failed', message, reason, attempts });

  if (task.imagePullPolicy === 'IfNotPresent') {
    try {
      const st = await deps.cri.image('ImageStatus', { image: { image: task.ref } }, { signal, waitForReady: false });
      if (st.image?.id) return { phase: 'Succeeded', imageID: `${task.image}@${st.image.id}`, attempts: 0 };
    } catch {
      // Not there, or the runtime cannot say right now: the pull below answers either way, with
      // its retries.
      if (signal.aborted) return undefined;
    }
  }

  let last: Verdict | undefined;
  /** Why the pull is not making attempts right now, for the deadline's message. */
  let waitingFor: string | undefined;
  let waitedForDisk = false;
  let attempts = 0;
  let failures = 0;
  let runtimeWaits = 0;
  for (;;) {
    if (signal.aborted) return undefined;
    const { timeoutSeconds, backoffLimit } = policy();
    let budgetMs = timeoutSeconds * 1000;
    if (deadline !== undefined) {
      const left = deadline - Date.now();
      if (left <= 0) return fail(waitingFor !== undefined ? `${MESSAGE_PULL_DEADLINE_EXCEEDED}: ${waitingFor}` : MESSAGE_PULL_DEADLINE_EXCEEDED, 'deadline', attempts);
      budgetMs = Math.min(budgetMs, left);
    }
    const full = await deps.diskCheck();
    deps.onDiskWait?.(full);
    if (full !== undefined) {
      waitingFor = full;
      waitedForDisk = true;
      update({ message: `waiting for disk space: ${full}` });
      await sleep(Math.min(DISK_RECHECK_MS, budgetMs), signal);
      continue;
    }
    if (waitedForDisk) {
      // There is room again: the wait's message goes.
      update({ message: '' });
      waitedForDisk = false;
    }
    attempts++;
    try {
      const auths = await deps.auths();
      const imageRef = await pullOnce(task, auths, budgetMs, deps, update, signal);
      return { phase: 'Succeeded', imageID: `${task.image}@${imageRef}`, pulledRef: imageRef, attempts };
    } catch (err) {
      if (signal.aborted) return undefined;
      const d = describe(err, Math.round(budgetMs / 1000));
      if (d.kind === 'permanent') return fail(d.message, d.reason, attempts);
      if (d.kind === 'runtime-down') {
        attempts--;
        waitingFor = d.message;
        update({ message: `waiting for the container runtime: ${d.message}` });
        await sleep(Math.min(backoffMs(runtimeWaits++), RUNTIME_RECHECK_MAX_MS, budgetMs), signal);
        continue;
      }
      runtimeWaits = 0;
      waitingFor = undefined;
      last = d;
      if (++failures > backoffLimit) break;
      update({ message: `attempt ${attempts} of ${backoffLimit + 1} failed: ${d.message}` });
      await sleep(deadline !== undefined ? Math.max(0, Math.min(backoffMs(failures - 1), deadline - Date.now())) : backoffMs(failures - 1), signal);
    }
  }
  return fail(last?.message ?? 'pull failed', last?.reason ?? 'other', attempts);
}

async function pullOnce(
  task: PullTask,
  auths: RegistryAuth[],
  budgetMs: number,
  deps: WorkerDeps,
  update: StateUpdate,
  signal: AbortSignal,
): Promise<string> {
  const sandbox = {
    labels: task.sandboxConfig?.labels ?? {},
    annotations: { ...(task.sandboxConfig?.annotations ?? {}), [ANNOTATION_PULLING_IMAGE_BY]: PULLING_IMAGE_BY_KRUISE_DAEMON },
  };
  // The layer list is fetched beside the pull, never before it: progress must not cost time.
  const trackAbort = new AbortController();
  const onAbort = (): void => trackAbort.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  const tracking = deps.progress ? startTracking(task.ref, auths, deps.progress, deps.registryHosts, update, trackAbort.signal) : Promise.resolve(undefined);
  const deadline = Date.now() + budgetMs;
  try {
    // Credentials in keyring order; the first that works wins. No anonymous fallback once some match.
    const tries: Array<AuthConfig | undefined> = auths.length > 0 ? auths.map(toAuth) : [undefined];
    let lastErr: unknown;
    for (const auth of tries) {
      try {
        const imageRef = await deps.shared.pull(task.ref, auth, sandbox, Math.max(1, deadline - Date.now()), signal);
        trackAbort.abort();
        return imageRef;
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
  hosts: WorkerDeps['registryHosts'],
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
    const image = parseReference(ref);
    const endpoints = hosts?.(image.domain).endpoints;
    const layers = await fetchImageLayers(pullString(image), auths, { signal, timeoutMs: 10_000, ...(endpoints ? { endpoints } : {}) });
    const tracked = await poller.track(layers.layers, (p) => update({ progress: p }));
    return {
      stop: () => {
        tracked.stop();
        release();
      },
    };
  } catch (err) {
    // Without the layer list there is no byte progress; the pull itself goes on (0, then 100), and
    // the status says why its progress stands still.
    release();
    if (!signal.aborted) update({ message: `${MESSAGE_PROGRESS_UNKNOWN}: ${errorMessage(err)}` });
    return undefined;
  }
}
