import { COMPLETION_POLICY_ALWAYS } from '../../api/enums.js';
import { jsonEqual } from '../../api/json-equal.js';
import {
  PREDOWNLOAD_BACKOFF_LIMIT,
  PREDOWNLOAD_DEFAULT_PARALLELISM,
  PREDOWNLOAD_DEFAULT_TIMEOUT_SECONDS,
  PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE,
  PREDOWNLOAD_TTL_SECONDS_AFTER_FINISHED,
} from '../../api/limits.js';
import {
  ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
  ANNOTATION_PREDOWNLOAD_PARALLELISM,
  ANNOTATION_PREDOWNLOAD_TIMEOUT_SECONDS,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_IMAGE_PREDOWNLOAD_IGNORED,
  LABEL_PRE_PREDOWNLOAD_CREATED,
  LABEL_REVISION_DATA_HASH,
} from '../../api/metadata-keys.js';
import { API_VERSION_V1ALPHA1, KIND_IMAGE_PULL_JOB } from '../../api/group-version.js';
import type { Container, ControllerRevision, PodTemplateSpec } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { scaled, type Workload } from './workload.js';

/** Which rollout a revision's pre-download belongs to (kruise-ts's addition, upstream #1419). */
export const ANNOTATION_PREDOWNLOAD_FROM = 'kruise-ts.io/image-predownload-from-revision';
/**
 * ANNOTATION_PREDOWNLOAD_FROM once the rollout to the revision has finished: a later rollout to it,
 * even from the same revision as before, is a new one. Never a revision name.
 */
export const PREDOWNLOAD_FROM_FINISHED = '(rollout finished)';

export type Decision =
  /**
   * No rollout (revisions equal): the workload's pre-download jobs go, and the revision's record of
   * the rollout that pre-downloaded it is closed (markFinished) so a later return to it pre-downloads again.
   */
  | { kind: 'finished'; markFinished: boolean }
  /** Not (yet) to be done: too few updated pods ready, or revisions unknown. */
  | { kind: 'wait'; reason: string }
  /** This rollout's jobs were created (or it was ignored) already. */
  | { kind: 'done' }
  /** Label the update revision ignored: pre-download cannot help this rollout. */
  | { kind: 'ignore'; reason: string }
  | { kind: 'create'; jobs: ImagePullJob[] };

export interface Outcome {
  decision: Decision;
  /** Problems with the workload's annotations, for a Warning event. */
  warnings: string[];
}

/** The pod template a CloneSet or StatefulSet revision stores (`data.spec.template`). */
function revisionTemplate(rev: ControllerRevision | undefined): PodTemplateSpec | undefined {
  const data = rev?.data as { spec?: { template?: PodTemplateSpec & { $patch?: string } } } | undefined;
  const t = data?.spec?.template;
  if (!t) return undefined;
  const { $patch: _patch, ...template } = t;
  return template;
}

/**
 * The containers whose image changed between two templates when nothing but images and metadata
 * changed (an in-place update); undefined when the change needs pods recreated.
 */
export function inPlaceImageChanges(oldT: PodTemplateSpec, newT: PodTemplateSpec): Container[] | undefined {
  const oldC = oldT.spec?.containers ?? [];
  const newC = newT.spec?.containers ?? [];
  if (oldC.length !== newC.length || oldC.some((c, i) => c.name !== newC[i]?.name)) return undefined;
  const withoutImages = (cs: Container[]): Container[] => cs.map(({ image: _image, ...rest }) => rest);
  const { containers: oc, ...oldRest } = oldT.spec ?? { containers: [] };
  const { containers: nc, ...newRest } = newT.spec ?? { containers: [] };
  if (!jsonEqual(withoutImages(oc), withoutImages(nc)) || !jsonEqual(oldRest, newRest)) return undefined;
  return newC.filter((c, i) => c.image !== oldC[i]?.image);
}

function intAnnotation(w: Workload, key: string, def: number, warnings: string[]): number {
  const raw = w.annotations[key];
  if (raw === undefined) return def;
  if (/^\d+$/.test(raw.trim()) && Number(raw) > 0) return Number(raw);
  warnings.push(`annotation ${key}="${raw}" is not a positive integer; using ${def}`);
  return def;
}

/** The ImagePullJob for one changed container, exactly as upstream's CloneSet controller builds it. */
function preDownloadJob(w: Workload, updateRev: ControllerRevision, c: Container, parallelism: number, timeoutSeconds: number): ImagePullJob {
  // As upstream's pkg/controller/cloneset/cloneset_predownload_image.go: the job carries the
  // revision's data hash under the revision's own label key; pods name their revision under
  // controller-revision-hash, so the selector lists both the name and the hash.
  const hash = updateRev.metadata?.labels?.[LABEL_REVISION_DATA_HASH] ?? '';
  const revName = updateRev.metadata?.name ?? '';
  const labels = { ...(w.template.metadata?.labels ?? {}), ...(hash !== '' ? { [LABEL_REVISION_DATA_HASH]: hash } : {}) };
  const pullSecrets = (w.template.spec?.imagePullSecrets ?? []).map((s) => s.name ?? '').filter((n) => n !== '');
  const annotations = w.template.metadata?.annotations;
  return {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_IMAGE_PULL_JOB,
    metadata: {
      name: `${revName}-${c.name}`,
      namespace: w.namespace,
      labels,
      ownerReferences: [{ apiVersion: w.apiVersion, kind: w.kind, name: w.name, uid: w.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      image: c.image ?? '',
      ...(pullSecrets.length > 0 ? { pullSecrets } : {}),
      // The nodes of the pods still on an old revision.
      podSelector: {
        ...(w.selector.matchLabels ? { matchLabels: w.selector.matchLabels } : {}),
        matchExpressions: [
          ...(w.selector.matchExpressions ?? []),
          { key: LABEL_CONTROLLER_REVISION_HASH, operator: 'NotIn', values: [...new Set([revName, hash])].filter((v) => v !== '') },
        ],
      },
      parallelism,
      pullPolicy: { backoffLimit: PREDOWNLOAD_BACKOFF_LIMIT, timeoutSeconds },
      completionPolicy: { type: COMPLETION_POLICY_ALWAYS, ttlSecondsAfterFinished: PREDOWNLOAD_TTL_SECONDS_AFTER_FINISHED },
      sandboxConfig: { labels, ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}) },
    },
  };
}

/**
 * Upstream's pre-download rules (pkg/controller/cloneset/cloneset_predownload_image.go) for one workload and its update and current revisions.
 * A revision pre-downloaded for an earlier rollout is pre-downloaded again when a new rollout
 * returns to it (upstream labels it once and never again, #1419).
 */
export function decide(w: Workload, updateRev: ControllerRevision | undefined, currentRev: ControllerRevision | undefined): Outcome {
  const warnings: string[] = [];
  const out = (decision: Decision): Outcome => ({ decision, warnings });
  if (!w.updateRevision || !w.currentRevision) return out({ kind: 'wait', reason: 'revisions not reported yet' });
  if (w.updateRevision === w.currentRevision) {
    const created = currentRev?.metadata?.labels?.[LABEL_PRE_PREDOWNLOAD_CREATED] !== undefined;
    return out({ kind: 'finished', markFinished: created && currentRev?.metadata?.annotations?.[ANNOTATION_PREDOWNLOAD_FROM] !== PREDOWNLOAD_FROM_FINISHED });
  }
  if (!updateRev) return out({ kind: 'wait', reason: `revision ${w.updateRevision} not found` });

  const rawMin = w.annotations[ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS];
  let minReady = 0;
  if (rawMin !== undefined) {
    const v = scaled(/^\d+$/.test(rawMin.trim()) ? Number(rawMin) : rawMin, w.replicas, true);
    if (v === undefined) warnings.push(`annotation ${ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS}="${rawMin}" is neither a number nor a percent; using 0`);
    else minReady = v;
  }
  if (w.updatedReadyReplicas < minReady) return out({ kind: 'wait', reason: `${w.updatedReadyReplicas} of ${minReady} updated pods ready` });

  const labels = updateRev.metadata?.labels ?? {};
  if (labels[LABEL_IMAGE_PREDOWNLOAD_IGNORED] !== undefined) return out({ kind: 'done' });
  if (labels[LABEL_PRE_PREDOWNLOAD_CREATED] !== undefined) {
    const from = updateRev.metadata?.annotations?.[ANNOTATION_PREDOWNLOAD_FROM];
    if (from === undefined || from === w.currentRevision) return out({ kind: 'done' });
  }

  if (w.notInPlace !== undefined) return out({ kind: 'ignore', reason: w.notInPlace });
  if (w.replicas <= PREDOWNLOAD_MIN_REPLICAS_EXCLUSIVE) return out({ kind: 'ignore', reason: `only ${w.replicas} replicas` });
  if (w.partition === 0 && w.maxUnavailable >= w.replicas) return out({ kind: 'ignore', reason: 'every pod updates in one batch' });
  const newT = revisionTemplate(updateRev);
  const oldT = revisionTemplate(currentRev);
  if (!newT || !oldT) return out({ kind: 'ignore', reason: 'revision templates unavailable' });
  const changed = inPlaceImageChanges(oldT, newT);
  if (!changed) return out({ kind: 'ignore', reason: 'the change is not in-place updatable' });
  if (changed.length === 0) return out({ kind: 'ignore', reason: 'no image changed' });

  const parallelism = intAnnotation(w, ANNOTATION_PREDOWNLOAD_PARALLELISM, PREDOWNLOAD_DEFAULT_PARALLELISM, warnings);
  const timeout = intAnnotation(w, ANNOTATION_PREDOWNLOAD_TIMEOUT_SECONDS, PREDOWNLOAD_DEFAULT_TIMEOUT_SECONDS, warnings);
  return out({ kind: 'create', jobs: changed.map((c) => preDownloadJob(w, updateRev, c, parallelism, timeout)) });
}
