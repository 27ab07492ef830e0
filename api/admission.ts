export type AdmissionOperation = 'create' | 'update';

export interface Admitted<T> {
  readonly allowed: true;
  /** The object to store: the request's object with the webhook's changes applied. */
  readonly object: T;
}

export interface Rejected {
  readonly allowed: false;
  /** HTTP status for the admission response: 400 invalid, 403 forbidden change. */
  readonly code: 400 | 403;
  /** One entry per problem, each "<field path>: <detail>". */
  readonly errors: readonly string[];
  readonly message: string;
}

export type AdmissionResult<T> = Admitted<T> | Rejected;

export function admit<T>(object: T): Admitted<T> {
  return { allowed: true, object };
}

export function reject(code: 400 | 403, errors: readonly string[]): Rejected {
  return { allowed: false, code, errors, message: errors.join('; ') };
}
