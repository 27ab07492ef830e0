import type { LabelSelector } from '../api/types/core.js';

export type Labels = Readonly<Record<string, string>> | undefined;

/**
 * Whether `labels` satisfy `selector` with apimachinery's rules: every matchLabels pair and every
 * requirement must hold; NotIn and DoesNotExist hold for a missing key; an empty selector matches
 * everything. Callers decide what an absent (null) selector means.
 */
export function selectorMatches(selector: LabelSelector, labels: Labels): boolean {
  const l = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (l[key] !== value) return false;
  }
  for (const r of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const value = l[r.key];
    const values = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        // The webhook refuses unknown operators; a stored one matches nothing, as apimachinery does.
        return false;
    }
  }
  return true;
}

export function sameLabels(a: Labels, b: Labels): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => x[k] === y[k]);
}
