// ImageListPullJob admission: the mutating webhook's defaults and the validating webhook's rules.
import { MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB } from './limits.js';
import { applyPullJobTemplateDefaults, validatePullJobTemplate } from './pull-job-template.js';
import type { ImageListPullJob } from './types/imagelistpulljob.js';
import { fieldError, index, isSet } from './validation/field-path.js';
import { imageReferenceProblem } from './validation/image-reference.js';

/**
 * completionPolicy.type Always and pullPolicy 600s/3 retries. imagePullPolicy stays unset: the
 * child ImagePullJobs get it from their own webhook.
 */
export function defaultImageListPullJob(job: ImageListPullJob): ImageListPullJob {
  const out = structuredClone(job);
  if (isSet(out.spec)) applyPullJobTemplateDefaults(out.spec);
  return out;
}

export function validateImageListPullJob(job: ImageListPullJob): string[] {
  // Webhooks see requests before the API server checks them against the schema.
  if (!isSet(job.spec)) return [fieldError('spec', 'required')];
  const errors = validatePullJobTemplate(job.spec, 'spec');
  const images = isSet(job.spec.images) ? job.spec.images : [];
  if (images.length === 0) errors.push(fieldError('spec.images', 'must not be empty'));
  if (images.length > MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB) {
    errors.push(fieldError('spec.images', `must have at most ${MAX_IMAGES_PER_IMAGE_LIST_PULL_JOB} items, got ${images.length}`));
  }
  const seen = new Set<string>();
  images.forEach((image, i) => {
    const at = index('spec.images', i);
    if (seen.has(image)) errors.push(fieldError(at, `duplicate image ${JSON.stringify(image)}`));
    seen.add(image);
    const problem = imageReferenceProblem(image);
    if (problem !== undefined) errors.push(fieldError(at, problem));
  });
  return errors;
}
