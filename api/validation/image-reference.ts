import { InvalidReferenceError, isDigest, joinNameTag, parseReference } from '../image-reference.js';
import type { ImageReference } from '../image-reference.js';

/** Why `image` is not a reference the daemon can pull, or undefined when it is. */
export function imageReferenceProblem(image: string): string | undefined {
  return parseOrProblem(image).problem;
}

/**
 * Why `name` cannot be a NodeImage key: it must be a repository name with neither tag nor digest,
 * because the daemon appends the tag to it.
 */
export function imageNameProblem(name: string): string | undefined {
  const { ref, problem } = parseOrProblem(name);
  if (problem !== undefined) return problem;
  if (ref?.tag !== undefined || ref?.digest !== undefined) return `image name "${name}" must not contain a tag or digest`;
  return undefined;
}

/** Why `tag` is neither a tag nor a digest of image `name`, or undefined when it pulls. */
export function imageTagProblem(name: string, tag: string): string | undefined {
  const { problem } = parseOrProblem(joinNameTag(name, tag));
  if (problem === undefined) return undefined;
  return isDigest(tag) ? `invalid digest ${JSON.stringify(tag)}` : `${JSON.stringify(tag)} is neither a valid tag nor a digest`;
}

function parseOrProblem(image: string): { ref?: ImageReference; problem?: string } {
  try {
    return { ref: parseReference(image) };
  } catch (err) {
    if (err instanceof InvalidReferenceError) return { problem: err.message };
    throw err;
  }
}
