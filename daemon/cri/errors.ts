import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';

export type CriErrorKind =
  | 'not-found'
  | 'unauthorized'
  | 'registry-unreachable'
  | 'deadline'
  | 'cancelled'
  | 'unavailable'
  | 'unimplemented'
  | 'other';

/** A failed CRI call: what kind of failure, the call, and the runtime's own words. */
export class CriError extends Error {
  constructor(
    readonly kind: CriErrorKind,
    readonly method: string,
    readonly grpcCode: number | undefined,
    readonly details: string,
    options?: { cause?: unknown },
  ) {
    super(`${method}: ${kind}: ${details}`, options);
    this.name = 'CriError';
  }
}

// containerd reports registry auth and network failures as UNKNOWN, so the text decides.
// Order matters: an auth failure's text often also says "failed to resolve ... not found"-like
// things, and a 404 text may include the registry address.
const unauthorized = [
  /\b401\b/,
  /\b403\b/,
  /unauthori[sz]ed/i,
  /authentication required/i,
  /no basic auth credentials/i,
  /pull access denied/i,
  /denied: /i,
  /insufficient_scope/i,
  /access to the requested resource is not authorized/i,
];
const notFound = [
  /\bnot found\b/i,
  /manifest unknown/i,
  /name unknown/i,
  /MANIFEST_UNKNOWN|NAME_UNKNOWN/,
  /\b404\b/,
  /repository .* does not exist/i,
  /no match for platform in manifest/i,
];
const unreachable = [
  /connection refused/i,
  /no such host/i,
  /dial tcp/i,
  /i\/o timeout/i,
  /network is unreachable/i,
  /no route to host/i,
  /connection reset by peer/i,
  /TLS handshake timeout/i,
  /server misbehaving/i,
  /x509: /i,
  /http: server gave HTTP response to HTTPS client/i,
  /\b50[234]\b.*(Bad Gateway|Service Unavailable|Gateway Timeout)/i,
  /unexpected EOF/i,
];

// Where a registry answers about the image itself: resolving the reference (the manifest), in
// containerd's, CRI-O's and Docker's words.
const manifestStage = [
  /failed to resolve reference/i,
  /manifest unknown|name unknown|MANIFEST_UNKNOWN|NAME_UNKNOWN/,
  /reading manifest/i,
  /\[manifests [^\]]*\]/i,
  /pull access denied/i,
  /requested access to the resource is denied/i,
];
// Past the manifest: a blob behind a CDN, the content store, unpacking into a snapshot. A 403 or a
// "not found" there says nothing final about the image.
const contentStage = [/\/blobs\//i, /httpReadSeeker/i, /failed to copy/i, /failed to extract/i, /snapshot/i, /content digest/i, /failed commit/i];

/**
 * A registry's definite answer about the image: the reference does not resolve (unknown repository
 * or tag) or the registry refused the credentials for its manifest. Only these fail a pull at once;
 * every other error (a 403 or 404 on a blob, a snapshotter's "not found", a runtime that is down)
 * is retried.
 */
export function definiteRegistryAnswer(err: CriError): boolean {
  if (err.kind !== 'not-found' && err.kind !== 'unauthorized') return false;
  if (contentStage.some((r) => r.test(err.details))) return false;
  // A runtime that answers with the gRPC code (CRI-O: NOT_FOUND, UNAUTHENTICATED) names the stage by it.
  if (err.grpcCode === GrpcStatus.NOT_FOUND || err.grpcCode === GrpcStatus.UNAUTHENTICATED || err.grpcCode === GrpcStatus.PERMISSION_DENIED) return true;
  return manifestStage.some((r) => r.test(err.details));
}

/** containerd's CRI answers this while it is still starting: nothing was done, any call may be repeated. */
export function notInitialized(details: string): boolean {
  return /server is not initialized yet/i.test(details);
}

export function classifyMessage(details: string): CriErrorKind | undefined {
  if (notInitialized(details)) return 'unavailable';
  if (unauthorized.some((r) => r.test(details))) return 'unauthorized';
  if (notFound.some((r) => r.test(details))) return 'not-found';
  if (unreachable.some((r) => r.test(details))) return 'registry-unreachable';
  if (/context deadline exceeded/i.test(details)) return 'deadline';
  if (/context canceled/i.test(details)) return 'cancelled';
  return undefined;
}

export function classify(code: number | undefined, details: string): CriErrorKind {
  switch (code) {
    case GrpcStatus.NOT_FOUND:
      return 'not-found';
    case GrpcStatus.UNAUTHENTICATED:
    case GrpcStatus.PERMISSION_DENIED:
      return 'unauthorized';
    case GrpcStatus.DEADLINE_EXCEEDED:
      return 'deadline';
    case GrpcStatus.CANCELLED:
      return 'cancelled';
    case GrpcStatus.UNAVAILABLE:
      return 'unavailable';
    case GrpcStatus.UNIMPLEMENTED:
      return 'unimplemented';
    default:
      return classifyMessage(details) ?? 'other';
  }
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === 'number';
}

export function toCriError(method: string, err: unknown): CriError {
  if (err instanceof CriError) return err;
  if (isServiceError(err)) {
    const details = err.details || err.message;
    return new CriError(classify(err.code, details), method, err.code, details, { cause: err });
  }
  const msg = err instanceof Error ? err.message : String(err);
  return new CriError(classifyMessage(msg) ?? 'other', method, undefined, msg, { cause: err });
}
