// Kubernetes name rules (apimachinery's validation package) that selectors and secret names obey.

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const qualifiedNamePart = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const alphanumericEnds = "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && dns1123Subdomain.test(value);
}

/** Why `key` is not a valid label key ("prefix/name"), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  let name = key;
  if (parts.length === 2) {
    const [prefix = '', rest = ''] = parts;
    if (prefix === '') return 'prefix part must be non-empty';
    if (!isDns1123Subdomain(prefix)) return 'prefix part must be a lowercase RFC 1123 subdomain';
    name = rest;
  } else if (parts.length > 2) {
    return 'must have at most one "/"';
  }
  if (name === '') return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!qualifiedNamePart.test(name)) {
    return `name part must consist of ${alphanumericEnds}`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!labelValue.test(value)) {
    return `must be empty or consist of ${alphanumericEnds}`;
  }
  return undefined;
}
