// Pull secrets for the daemons (upstream pkg/controller/imagepulljob/imagepulljob_utils.go, the v1.9 "batch" model): the daemon reads secrets only
// in its own namespace, so each job secret is copied there, one copy per source secret shared by
// every job that uses it. The copy's references annotation lists those jobs; the last job to let go
// deletes it. Pure: the planning half of the sync.
import type { Secret } from '../../api/types/core.js';
import { createHash } from 'node:crypto';
import { jsonEqual } from '../../api/json-equal.js';
import { ANNOTATION_SECRET_MODE, ANNOTATION_SECRET_REFERENCES, ANNOTATION_SECRET_SOURCE_KEY, SECRET_MODE_BATCH } from '../../api/metadata-keys.js';


/**
 * The copy's name, the same for every job and every replica of the manager: jobs racing to create
 * it meet on AlreadyExists instead of leaving duplicates (upstream names copies at random).
 */
export function copyName(namespace: string, name: string): string {
  const hash = createHash('sha256').update(`${namespace}/${name}`).digest('hex').slice(0, 10);
  const head = name.slice(0, 253 - 11).replace(/[.-]+$/, '');
  return `${head}-${hash}`;
}

/** Jobs ("namespace/name") a copy serves, sorted. */
export function referencesOf(s: Secret | undefined): string[] {
  const raw = s?.metadata?.annotations?.[ANNOTATION_SECRET_REFERENCES] ?? '';
  return [...new Set(raw.split(',').filter((x) => x !== ''))].sort();
}

/** The source a copy was made from, "namespace/name". */
export function sourceKeyOf(s: Secret | undefined): string | undefined {
  return s?.metadata?.annotations?.[ANNOTATION_SECRET_SOURCE_KEY];
}

function annotated(s: Secret, references: string[], sourceKey: string): Record<string, string> {
  return {
    ...(s.metadata?.annotations ?? {}),
    [ANNOTATION_SECRET_SOURCE_KEY]: sourceKey,
    [ANNOTATION_SECRET_REFERENCES]: references.join(','),
    [ANNOTATION_SECRET_MODE]: SECRET_MODE_BATCH,
  };
}

/**
 * The copy of `source` in `daemonNamespace` with `job` among its users and the source's data, or
 * undefined when `existing` is that already. The type of an existing copy is left alone (Secret
 * types cannot change).
 */
export function desiredCopy(source: Secret, existing: Secret | undefined, job: string, daemonNamespace: string): Secret | undefined {
  const sourceKey = `${source.metadata?.namespace ?? ''}/${source.metadata?.name ?? ''}`;
  const references = [...new Set([...referencesOf(existing), job])].sort();
  if (existing) {
    const current = existing.metadata?.annotations ?? {};
    const same =
      jsonEqual(existing.data ?? {}, source.data ?? {}) &&
      current[ANNOTATION_SECRET_REFERENCES] === references.join(',') &&
      current[ANNOTATION_SECRET_SOURCE_KEY] === sourceKey &&
      current[ANNOTATION_SECRET_MODE] === SECRET_MODE_BATCH;
    if (same) return undefined;
    return { ...existing, metadata: { ...existing.metadata, annotations: annotated(existing, references, sourceKey) }, data: { ...(source.data ?? {}) } };
  }
  const name = copyName(source.metadata?.namespace ?? '', source.metadata?.name ?? '');
  const copy: Secret = { metadata: { name, namespace: daemonNamespace }, data: { ...(source.data ?? {}) } };
  if (source.type) copy.type = source.type;
  copy.metadata = { ...copy.metadata, annotations: annotated(copy, references, sourceKey) };
  return copy;
}

/** The copy without `job`; 'delete' when no job is left; undefined when `job` was not a user. */
export function releasedCopy(copy: Secret, job: string): Secret | 'delete' | undefined {
  const references = referencesOf(copy);
  if (!references.includes(job)) return undefined;
  const left = references.filter((r) => r !== job);
  if (left.length === 0) return 'delete';
  return { ...copy, metadata: { ...copy.metadata, annotations: { ...(copy.metadata?.annotations ?? {}), [ANNOTATION_SECRET_REFERENCES]: left.join(',') } } };
}
