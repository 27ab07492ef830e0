// NodeImage admission: the mutating webhook's defaults and the validating webhook's rules, plus the
// tag checks that keep an unpullable tag from failing on every node later.
import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS, MAX_IMAGES_PER_NODE_IMAGE, NODE_IMAGE_DEADLINE_GRACE_SECONDS } from './limits.js';
import { formatTime, isRfc3339, timeMs } from './time.js';
import type { ImageSpec, ImageTagSpec, NodeImage } from './types/nodeimage.js';
import { child, fieldError, index, isEmpty, isSet } from './validation/field-path.js';
import { validateImagePullPolicy } from './validation/image-pull-policy.js';
import { imageNameProblem, imageTagProblem } from './validation/image-reference.js';
import { checkInteger } from './validation/numbers.js';

/** Orders by tag the way upstream does (byte order), which every writer of NodeImages keeps. */
export function sortByTag<T extends { tag: string }>(tags: readonly T[]): T[] {
  return [...tags].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}

/**
 * The moment a tag still Waiting or Pulling fails with "pulling exceeds the activeDeadlineSeconds":
 * createdAt + activeDeadlineSeconds + NODE_IMAGE_DEADLINE_GRACE_SECONDS (upstream's NodeImage
 * controller rule, nodeimage_controller.go). The manager applies it for a daemon that is gone, the
 * daemon for a tag still queued behind busy workers or pulling that long: the one rule on both
 * sides means they never write different phases for one tag.
 */
export function tagEndMs(tag: ImageTagSpec): number | undefined {
  const createdAt = timeMs(tag.createdAt);
  const deadline = tag.pullPolicy?.activeDeadlineSeconds;
  if (createdAt === undefined || deadline === undefined) return undefined;
  return createdAt + (deadline + NODE_IMAGE_DEADLINE_GRACE_SECONDS) * 1000;
}

/** Every tag gets createdAt (now) and pullPolicy 600s/3 retries; spec and status tags are sorted. */
export function defaultNodeImage(nodeImage: NodeImage, now: Date): NodeImage {
  const out = structuredClone(nodeImage);
  const createdAt = formatTime(now);
  for (const image of Object.values(out.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) {
      if (!isSet(tag.createdAt)) tag.createdAt = createdAt;
      const pullPolicy = isSet(tag.pullPolicy) ? tag.pullPolicy : {};
      pullPolicy.timeoutSeconds ??= DEFAULT_PULL_TIMEOUT_SECONDS;
      pullPolicy.backoffLimit ??= DEFAULT_PULL_BACKOFF_LIMIT;
      tag.pullPolicy = pullPolicy;
    }
    if (isSet(image.tags)) image.tags = sortByTag(image.tags);
  }
  for (const status of Object.values(out.status?.imageStatuses ?? {})) {
    if (isSet(status.tags)) status.tags = sortByTag(status.tags);
  }
  return out;
}

export function validateNodeImage(nodeImage: NodeImage): string[] {
  const images = Object.entries(nodeImage.spec?.images ?? {});
  const errors: string[] = [];
  if (images.length > MAX_IMAGES_PER_NODE_IMAGE) {
    errors.push(fieldError('spec.images', `must have at most ${MAX_IMAGES_PER_NODE_IMAGE} images, got ${images.length}`));
  }
  for (const [name, image] of images) errors.push(...validateImage(name, image, index('spec.images', name)));
  return errors;
}

function validateImage(name: string, image: ImageSpec, path: string): string[] {
  if (name === '') return [fieldError(path, 'image name must not be empty')];
  const nameProblem = imageNameProblem(name);
  if (nameProblem !== undefined) return [fieldError(path, nameProblem)];
  const errors: string[] = [];
  (image.pullSecrets ?? []).forEach((secret, i) => {
    const at = index(child(path, 'pullSecrets'), i);
    if (isEmpty(secret.namespace)) errors.push(fieldError(child(at, 'namespace'), 'must not be empty'));
    if (isEmpty(secret.name)) errors.push(fieldError(child(at, 'name'), 'must not be empty'));
  });
  if (!isSet(image.tags)) errors.push(fieldError(child(path, 'tags'), 'required'));
  const seen = new Set<string>();
  (image.tags ?? []).forEach((tag, i) => {
    const at = index(child(path, 'tags'), i);
    if (isEmpty(tag.tag)) {
      errors.push(fieldError(child(at, 'tag'), 'must not be empty'));
      return;
    }
    if (seen.has(tag.tag)) errors.push(fieldError(child(at, 'tag'), `duplicate tag ${JSON.stringify(tag.tag)}`));
    seen.add(tag.tag);
    errors.push(...validateTag(name, tag, at));
  });
  return errors;
}

function validateTag(name: string, tag: ImageTagSpec, path: string): string[] {
  const errors: string[] = [];
  const tagProblem = imageTagProblem(name, tag.tag);
  if (tagProblem !== undefined) errors.push(fieldError(child(path, 'tag'), tagProblem));
  if (!isSet(tag.createdAt)) {
    errors.push(fieldError(child(path, 'createdAt'), 'required'));
  } else if (!isRfc3339(tag.createdAt)) {
    errors.push(fieldError(child(path, 'createdAt'), `must be an RFC 3339 time, got ${JSON.stringify(tag.createdAt)}`));
  }
  errors.push(...checkInteger(child(path, 'version'), tag.version, { min: 0 }));
  errors.push(...validateImagePullPolicy(tag.imagePullPolicy, child(path, 'imagePullPolicy')));
  const policyPath = child(path, 'pullPolicy');
  const policy = tag.pullPolicy;
  if (!isSet(policy)) return [...errors, fieldError(policyPath, 'required')];
  if (!isSet(policy.ttlSecondsAfterFinished)) errors.push(fieldError(child(policyPath, 'ttlSecondsAfterFinished'), 'required'));
  errors.push(
    ...checkInteger(child(policyPath, 'ttlSecondsAfterFinished'), policy.ttlSecondsAfterFinished, { min: 0, int32: true }),
    ...checkInteger(child(policyPath, 'timeoutSeconds'), policy.timeoutSeconds, { min: 1, int32: true }),
    ...checkInteger(child(policyPath, 'backoffLimit'), policy.backoffLimit, { min: 0, int32: true }),
    ...checkInteger(child(policyPath, 'activeDeadlineSeconds'), policy.activeDeadlineSeconds, { min: 1 }),
  );
  return errors;
}
