import { IMAGE_PULL_POLICIES, isOneOf } from '../enums.js';
import { isEmpty, notSupported } from './field-path.js';

/** Empty is allowed: the ImagePullJob webhook defaults it, and the daemon treats it as Always. */
export function validateImagePullPolicy(policy: string | null | undefined, path: string): string[] {
  if (isEmpty(policy) || isOneOf(IMAGE_PULL_POLICIES, policy)) return [];
  return [notSupported(path, policy, IMAGE_PULL_POLICIES)];
}
