// Defaulting and validation of the template ImagePullJob and ImageListPullJob share. A list job
// hands its template to one child ImagePullJob per image, so whatever a child would be refused for
// is refused on the list job already.
import { COMPLETION_POLICY_ALWAYS, COMPLETION_POLICY_NEVER, COMPLETION_POLICY_TYPES, isOneOf } from './enums.js';
import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, MAX_INT32 } from './limits.js';
import type { ImagePullJobTemplate } from './types/imagepulljob.js';
import { child, fieldError, index, isEmpty, isSet, notSupported } from './validation/field-path.js';
import { validateImagePullPolicy } from './validation/image-pull-policy.js';
import { validateLabelSelector } from './validation/label-selector.js';
import { isDns1123Subdomain } from './validation/names.js';
import { checkInteger } from './validation/numbers.js';

/** The webhook's template defaults; mutates `spec`, which the callers own (a fresh copy). */
export function applyPullJobTemplateDefaults(spec: ImagePullJobTemplate): void {
  const completionPolicy = isSet(spec.completionPolicy) ? spec.completionPolicy : {};
  if (isEmpty(completionPolicy.type)) completionPolicy.type = COMPLETION_POLICY_ALWAYS;
  spec.completionPolicy = completionPolicy;
  const pullPolicy = isSet(spec.pullPolicy) ? spec.pullPolicy : {};
  pullPolicy.timeoutSeconds ??= DEFAULT_PULL_TIMEOUT_SECONDS;
  pullPolicy.backoffLimit ??= DEFAULT_PULL_BACKOFF_LIMIT;
  spec.pullPolicy = pullPolicy;
}

export function validatePullJobTemplate(spec: ImagePullJobTemplate, path: string): string[] {
  return [
    ...validateNodeSelection(spec, path),
    ...validateParallelism(spec.parallelism, child(path, 'parallelism')),
    ...validatePullPolicy(spec, path),
    ...validateCompletionPolicy(spec, path),
    ...validateImagePullPolicy(spec.imagePullPolicy, child(path, 'imagePullPolicy')),
    ...validatePullSecretNames(spec.pullSecrets, child(path, 'pullSecrets')),
  ];
}

function validateNodeSelection(spec: ImagePullJobTemplate, path: string): string[] {
  const errors: string[] = [];
  const selectorPath = child(path, 'selector');
  const selector = spec.selector;
  if (isSet(selector)) {
    const hasLabelSelector = isSet(selector.matchLabels) || isSet(selector.matchExpressions);
    if (hasLabelSelector && isSet(selector.names)) {
      errors.push(fieldError(selectorPath, 'names and matchLabels/matchExpressions are mutually exclusive'));
    }
    if (hasLabelSelector) errors.push(...validateLabelSelector(selector, selectorPath));
    const seen = new Set<string>();
    (selector.names ?? []).forEach((name, i) => {
      const at = index(child(selectorPath, 'names'), i);
      if (seen.has(name)) errors.push(fieldError(at, `duplicate node name ${JSON.stringify(name)}`));
      seen.add(name);
    });
  }
  if (isSet(spec.podSelector)) {
    const podSelectorPath = child(path, 'podSelector');
    if (isSet(selector)) errors.push(fieldError(podSelectorPath, `must not be set together with ${selectorPath}`));
    errors.push(...validateLabelSelector(spec.podSelector, podSelectorPath));
  }
  return errors;
}

/** A non-negative integer, also when written as a string; percentages mean nothing here. */
function validateParallelism(parallelism: number | string | null | undefined, path: string): string[] {
  if (!isSet(parallelism)) return [];
  const valid =
    typeof parallelism === 'number'
      ? Number.isSafeInteger(parallelism) && parallelism >= 0 && parallelism <= MAX_INT32
      : /^[0-9]+$/.test(parallelism) && Number(parallelism) <= MAX_INT32;
  return valid ? [] : [fieldError(path, `must be a non-negative integer, got ${JSON.stringify(parallelism)}`)];
}

function validatePullPolicy(spec: ImagePullJobTemplate, path: string): string[] {
  const pullPolicy = spec.pullPolicy;
  if (!isSet(pullPolicy)) return [];
  const at = child(path, 'pullPolicy');
  return [
    // A zero timeout cancels every attempt at once, so such a job could never succeed.
    ...checkInteger(child(at, 'timeoutSeconds'), pullPolicy.timeoutSeconds, { min: 1, int32: true }),
    ...checkInteger(child(at, 'backoffLimit'), pullPolicy.backoffLimit, { min: 0, int32: true }),
  ];
}

function validateCompletionPolicy(spec: ImagePullJobTemplate, path: string): string[] {
  const at = child(path, 'completionPolicy');
  const policy = isSet(spec.completionPolicy) ? spec.completionPolicy : {};
  const type: string = isEmpty(policy.type) ? COMPLETION_POLICY_ALWAYS : policy.type;
  const deadlinePath = child(at, 'activeDeadlineSeconds');
  const ttlPath = child(at, 'ttlSecondsAfterFinished');
  if (!isOneOf(COMPLETION_POLICY_TYPES, type)) return [notSupported(child(at, 'type'), type, COMPLETION_POLICY_TYPES)];
  if (type === COMPLETION_POLICY_NEVER) {
    const errors: string[] = [];
    const never = `must not be set when ${child(at, 'type')} is ${COMPLETION_POLICY_NEVER}`;
    if (isSet(policy.activeDeadlineSeconds)) errors.push(fieldError(deadlinePath, never));
    if (isSet(policy.ttlSecondsAfterFinished)) errors.push(fieldError(ttlPath, never));
    return errors;
  }
  const errors = checkInteger(ttlPath, policy.ttlSecondsAfterFinished, { min: 0, int32: true });
  const deadline = policy.activeDeadlineSeconds;
  const deadlineErrors = checkInteger(deadlinePath, deadline, { min: 1 });
  if (deadlineErrors.length > 0) return [...errors, ...deadlineErrors];
  // Upstream's own rule: a deadline shorter than one attempt fails every node before it can finish.
  const timeout = spec.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  if (isSet(deadline) && deadline < timeout) {
    errors.push(fieldError(deadlinePath, `must be >= pullPolicy.timeoutSeconds (${timeout})`));
  }
  return errors;
}

function validatePullSecretNames(names: string[] | null | undefined, path: string): string[] {
  const errors: string[] = [];
  (names ?? []).forEach((name, i) => {
    if (!isDns1123Subdomain(name)) errors.push(fieldError(index(path, i), `${JSON.stringify(name)} is not a valid secret name`));
  });
  return errors;
}
