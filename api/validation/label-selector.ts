import type { LabelSelector } from '../types/core.js';
import { LABEL_SELECTOR_OPERATORS, SELECTOR_OP_DOES_NOT_EXIST, SELECTOR_OP_EXISTS, isOneOf } from '../enums.js';
import { child, fieldError, index, isSet, notSupported } from './field-path.js';
import { labelKeyProblem, labelValueProblem } from './names.js';

/**
 * The rules metav1.LabelSelectorAsSelector enforces: valid keys and values, a known operator, values
 * for In/NotIn and none for Exists/DoesNotExist.
 */
export function validateLabelSelector(selector: LabelSelector, path: string): string[] {
  const errors: string[] = [];
  const matchLabels = selector.matchLabels ?? {};
  for (const [key, value] of Object.entries(matchLabels)) {
    const at = index(child(path, 'matchLabels'), key);
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) errors.push(fieldError(at, `invalid label key: ${keyProblem}`));
    const valueProblem = labelValueProblem(value);
    if (valueProblem !== undefined) errors.push(fieldError(at, `invalid label value ${JSON.stringify(value)}: ${valueProblem}`));
  }
  (selector.matchExpressions ?? []).forEach((requirement, i) => {
    const at = index(child(path, 'matchExpressions'), i);
    const keyProblem = labelKeyProblem(requirement.key);
    if (keyProblem !== undefined) errors.push(fieldError(child(at, 'key'), `invalid label key: ${keyProblem}`));
    const values = requirement.values ?? [];
    if (!isOneOf(LABEL_SELECTOR_OPERATORS, requirement.operator)) {
      errors.push(notSupported(child(at, 'operator'), requirement.operator, LABEL_SELECTOR_OPERATORS));
    } else if (requirement.operator === SELECTOR_OP_EXISTS || requirement.operator === SELECTOR_OP_DOES_NOT_EXIST) {
      if (values.length > 0) {
        errors.push(fieldError(child(at, 'values'), `must be empty when operator is ${requirement.operator}`));
      }
    } else if (values.length === 0) {
      errors.push(fieldError(child(at, 'values'), `must be non-empty when operator is ${requirement.operator}`));
    }
    values.forEach((value, j) => {
      const problem = isSet(value) ? labelValueProblem(value) : 'must be a string';
      if (problem === undefined) return;
      errors.push(fieldError(index(child(at, 'values'), j), `invalid label value ${JSON.stringify(value)}: ${problem}`));
    });
  });
  return errors;
}
