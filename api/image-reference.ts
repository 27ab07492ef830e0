// Image reference parsing and normalisation with the rules of github.com/distribution/reference
// (ParseNormalizedNamed), which the kubelet and containerd use: docker.io and library/ defaults,
// registries with ports, tags, digests and tag+digest.

export const defaultDomain = 'docker.io';
const legacyDomain = 'index.docker.io';
const officialRepoPrefix = 'library/';
export const defaultTag = 'latest';

const pathComponent = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const domainComponent = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const ipv6 = /^\[[a-fA-F0-9:]+\]$/;
const tagRe = /^[\w][\w.-]{0,127}$/;
const digestRe = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}$/;
const maxNameLength = 255;

export class InvalidReferenceError extends Error {
  constructor(
    readonly reference: string,
    reason: string,
  ) {
    super(`invalid image reference "${reference}": ${reason}`);
    this.name = 'InvalidReferenceError';
  }
}

export interface ImageReference {
  /** Registry host, with port when given: "docker.io", "127.0.0.1:5000". */
  readonly domain: string;
  /** Repository path inside the registry: "library/nginx". */
  readonly path: string;
  readonly tag?: string;
  readonly digest?: string;
}

function splitDomain(name: string): { domain: string; path: string } {
  const i = name.indexOf('/');
  let domain: string;
  let path: string;
  const first = i === -1 ? '' : name.slice(0, i);
  if (i === -1 || (!first.includes('.') && !first.includes(':') && first !== 'localhost' && first.toLowerCase() === first)) {
    domain = defaultDomain;
    path = name;
  } else {
    domain = first;
    path = name.slice(i + 1);
  }
  if (domain === legacyDomain) domain = defaultDomain;
  if (domain === defaultDomain && !path.includes('/')) path = officialRepoPrefix + path;
  return { domain, path };
}

function validDomain(domain: string): boolean {
  let host = domain;
  const portIdx = domain.lastIndexOf(':');
  if (portIdx !== -1 && !domain.endsWith(']')) {
    const port = domain.slice(portIdx + 1);
    if (!/^[0-9]+$/.test(port)) return false;
    host = domain.slice(0, portIdx);
  }
  if (ipv6.test(host)) return true;
  return host.split('.').every((c) => domainComponent.test(c));
}

export function parseReference(input: string): ImageReference {
  const ref = input.trim();
  if (ref === '') throw new InvalidReferenceError(input, 'empty');
  if (/\s/.test(ref)) throw new InvalidReferenceError(input, 'contains whitespace');
  let rest = ref;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at !== -1) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!digestRe.test(digest)) throw new InvalidReferenceError(input, `invalid digest "${digest}"`);
    if (digest.startsWith('sha256:') && !/^sha256:[a-f0-9]{64}$/.test(digest)) {
      throw new InvalidReferenceError(input, 'sha256 digest must be 64 lowercase hex characters');
    }
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!tagRe.test(tag)) throw new InvalidReferenceError(input, `invalid tag "${tag}"`);
  }
  if (rest === '') throw new InvalidReferenceError(input, 'missing repository name');
  const { domain, path } = splitDomain(rest);
  if (!validDomain(domain)) throw new InvalidReferenceError(input, `invalid registry host "${domain}"`);
  if (path.toLowerCase() !== path) throw new InvalidReferenceError(input, 'repository name must be lowercase');
  for (const c of path.split('/')) {
    if (!pathComponent.test(c)) throw new InvalidReferenceError(input, `invalid repository path component "${c}"`);
  }
  if (domain.length + 1 + path.length > maxNameLength) {
    throw new InvalidReferenceError(input, `repository name longer than ${maxNameLength} characters`);
  }
  return { domain, path, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** "docker.io/library/nginx" */
function fullName(ref: ImageReference): string {
  return `${ref.domain}/${ref.path}`;
}

/** The short form users write and NodeImage keys use: "nginx", "foo/bar", "ghcr.io/x/y". */
export function familiarName(ref: ImageReference): string {
  if (ref.domain !== defaultDomain) return fullName(ref);
  return ref.path.startsWith(officialRepoPrefix) ? ref.path.slice(officialRepoPrefix.length) : ref.path;
}

/** Canonical string: name, tag (default latest unless pinned by digest), digest. */
export function canonicalString(ref: ImageReference): string {
  let s = fullName(ref);
  if (ref.tag !== undefined) s += `:${ref.tag}`;
  else if (ref.digest === undefined) s += `:${defaultTag}`;
  if (ref.digest !== undefined) s += `@${ref.digest}`;
  return s;
}

/**
 * What to hand to PullImage: a digest wins over a tag (containerd resolves name@digest and records
 * the digest), otherwise name:tag.
 */
export function pullString(ref: ImageReference): string {
  if (ref.digest !== undefined) return `${fullName(ref)}@${ref.digest}`;
  return `${fullName(ref)}:${ref.tag ?? defaultTag}`;
}

export function isDigest(tagOrDigest: string): boolean {
  return digestRe.test(tagOrDigest);
}

/**
 * Joins a NodeImage key and tag into a pullable reference; a "tag" that is a digest is joined with
 * "@" (upstream joins it with ":", which no registry accepts).
 */
export function joinNameTag(name: string, tagOrDigest: string): string {
  return isDigest(tagOrDigest) ? `${name}@${tagOrDigest}` : `${name}:${tagOrDigest}`;
}

/** Splits a user reference into the NodeImage key (familiar name) and tag-or-digest (digest wins). */
export function nameAndTag(input: string): { name: string; tag: string } {
  const ref = parseReference(input);
  return { name: familiarName(ref), tag: ref.digest ?? ref.tag ?? defaultTag };
}

/** True when a runtime's repoTags / repoDigests entry names the same image as name + tag-or-digest. */
export function sameImage(runtimeRef: string, name: string, tagOrDigest: string): boolean {
  let a: ImageReference;
  let b: ImageReference;
  try {
    a = parseReference(runtimeRef);
    b = parseReference(joinNameTag(name, tagOrDigest));
  } catch {
    return false;
  }
  if (fullName(a) !== fullName(b)) return false;
  if (b.digest !== undefined) return a.digest === b.digest;
  return a.digest === undefined && (a.tag ?? defaultTag) === (b.tag ?? defaultTag);
}
