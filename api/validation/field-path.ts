// Error texts name the offending field the way Kubernetes does: "spec.images[nginx].tags[0].tag".

export function fieldError(path: string, detail: string): string {
  return `${path}: ${detail}`;
}

export function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

export function index(path: string, i: number | string): string {
  return `${path}[${i}]`;
}

/** Present in the object; JSON null counts as absent, as it does for Go's decoder. */
export function isSet<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

/** Unset or the empty string: Go cannot tell these apart for string fields. */
export function isEmpty(value: string | null | undefined): value is '' | null | undefined {
  return !isSet(value) || value === '';
}

export function notSupported(path: string, value: string, allowed: readonly string[]): string {
  return fieldError(path, `unsupported value ${JSON.stringify(value)} (must be one of ${allowed.join(', ')})`);
}
