// ImagePullJob admission: the mutating webhook's defaults and the validating webhook's rules.
import type { AdmissionOperation } from './admission.js';
import { IMAGE_PULL_POLICY_IF_NOT_PRESENT } from './enums.js';
import { jsonEqual } from './json-equal.js';
import { FINALIZER_DELETION_PROTECTION } from './metadata-keys.js';
import { applyPullJobTemplateDefaults, validatePullJobTemplate } from './pull-job-template.js';
import type { ImagePullJob } from './types/imagepulljob.js';
import { fieldError, isEmpty, isSet } from './validation/field-path.js';
import { imageReferenceProblem } from './validation/image-reference.js';

/**
 * completionPolicy.type Always, pullPolicy 600s/3 retries, imagePullPolicy IfNotPresent, and on
 * create the finalizer that lets the controller clean up secret copies before the job goes.
 */
export function defaultImagePullJob(job: ImagePullJob, operation: AdmissionOperation): ImagePullJob {
  const out = structuredClone(job);
  if (!isSet(out.spec)) return out;
  applyPullJobTemplateDefaults(out.spec);
  if (isEmpty(out.spec.imagePullPolicy)) out.spec.imagePullPolicy = IMAGE_PULL_POLICY_IF_NOT_PRESENT;
  if (operation === 'create') {
    const metadata = out.metadata ?? {};
    const finalizers = metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER_DELETION_PROTECTION)) metadata.finalizers = [...finalizers, FINALIZER_DELETION_PROTECTION];
    out.metadata = metadata;
  }
  return out;
}

/** Errors of a create (no `oldJob`) or an update; empty when the job is admitted. */
export function validateImagePullJob(job: ImagePullJob, oldJob?: ImagePullJob): string[] {
  // Webhooks see requests before the API server checks them against the schema.
  if (!isSet(job.spec)) return [fieldError('spec', 'required')];
  const errors = validatePullJobTemplate(job.spec, 'spec');
  const image = job.spec.image;
  if (isEmpty(image)) {
    errors.push(fieldError('spec.image', 'must not be empty'));
  } else {
    const problem = imageReferenceProblem(image);
    if (problem !== undefined) errors.push(fieldError('spec.image', problem));
  }
  if (oldJob !== undefined && !sameSecrets(job.spec.pullSecrets, oldJob.spec?.pullSecrets)) {
    // Secret copies are claimed per job when it starts; a changed list would leave stale copies.
    errors.push(fieldError('spec.pullSecrets', 'field is immutable'));
  }
  const finishedAt = oldJob?.status?.completionTime;
  if (oldJob !== undefined && isSet(finishedAt) && !jsonEqual(withoutTtl(job.spec), withoutTtl(oldJob.spec))) {
    // Upstream admits such an edit and then ignores it (kruise#1386): the user believes it ran.
    errors.push(
      fieldError(
        'spec',
        `the job finished at ${finishedAt} and pulls nothing more, so its spec cannot change (only completionPolicy.ttlSecondsAfterFinished may): create a new ImagePullJob, or delete this one and create it again`,
      ),
    );
  }
  return errors;
}

/** The spec without the one field that still matters once the job has finished. */
function withoutTtl(spec: ImagePullJob['spec'] | undefined): unknown {
  if (!isSet(spec)) return spec;
  const { completionPolicy, ...rest } = spec;
  if (!isSet(completionPolicy)) return rest;
  const { ttlSecondsAfterFinished: _ttl, ...policy } = completionPolicy;
  return { ...rest, completionPolicy: policy };
}

function sameSecrets(a: string[] | null | undefined, b: string[] | null | undefined): boolean {
  const x = [...(isSet(a) ? a : [])].sort();
  const y = [...(isSet(b) ? b : [])].sort();
  return x.length === y.length && x.every((name, i) => name === y[i]);
}
