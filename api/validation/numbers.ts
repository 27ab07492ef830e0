import { MAX_INT32 } from '../limits.js';
import { fieldError, isSet } from './field-path.js';

export interface IntegerRule {
  min?: number;
  /** Fields declared int32 in the schema; the others are int64. */
  int32?: boolean;
}

/** Checks an optional integer field; returns the errors (none when the field is absent). */
export function checkInteger(path: string, value: number | null | undefined, rule: IntegerRule = {}): string[] {
  if (!isSet(value)) return [];
  if (!Number.isSafeInteger(value)) return [fieldError(path, `must be an integer, got ${value}`)];
  if (rule.min !== undefined && value < rule.min) return [fieldError(path, `must be >= ${rule.min}, got ${value}`)];
  if (rule.int32 === true && value > MAX_INT32) return [fieldError(path, `must be <= ${MAX_INT32}, got ${value}`)];
  return [];
}
