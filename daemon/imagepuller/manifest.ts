// Reads an image's layer list (digests and sizes) from its registry, or the mirror containerd pulls
// it through, with the Registry HTTP API v2, so containerd's per-blob download offsets can be
// turned into per-image progress while containerd pulls. Only manifests are read here; the blobs
// are containerd's business.

import { createHash } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { defaultTag, isDigest, parseReference } from '../../api/image-reference.js';
import { errorMessage } from '../../kube/log.js';
import type { RegistryAuth } from './credentials.js';
import { defaultEndpoint, type RegistryEndpoint } from './registryhosts.js';

export interface LayerInfo {
  digest: string;
  size: number;
}

export interface ImageLayers {
  /** Digest of the platform-specific image manifest (not of the index that may point to it). */
  manifestDigest: string;
  configDigest: string;
  layers: LayerInfo[];
  /** Sum of the (compressed) layer sizes: the bytes a pull downloads, the config aside. */
  totalBytes: number;
}

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface FetchLayersOptions {
  signal?: AbortSignal;
  /** Per HTTP request, token requests included. */
  timeoutMs?: number;
  /** Which manifest of a multi-platform index to read; linux and this process's architecture by default. */
  platform?: Platform;
  /** Where containerd reads the registry's manifests (registryhosts.ts); the registry itself by default. */
  endpoints?: readonly RegistryEndpoint[];
}

const ociIndex = 'application/vnd.oci.image.index.v1+json';
const dockerList = 'application/vnd.docker.distribution.manifest.list.v2+json';
const ociManifest = 'application/vnd.oci.image.manifest.v1+json';
const dockerManifest = 'application/vnd.docker.distribution.manifest.v2+json';
const acceptHeader = [ociIndex, dockerList, ociManifest, dockerManifest].join(', ');

const defaultTimeoutMs = 10_000;

// Node's process.arch names → the GOARCH names image indexes use.
const goArch: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le' };

// DNS failures say nothing about the scheme, so they do not trigger the plain-HTTP retry.
const notSchemeErrors = new Set(['ENOTFOUND', 'EAI_AGAIN']);

interface Session {
  /** The endpoint's host[:port]. */
  readonly host: string;
  /** Where the API lives, without the scheme (that is `scheme`): host[:port]/.../v2. */
  readonly base: string;
  readonly endpoint: RegistryEndpoint;
  readonly agent: https.Agent | undefined;
  readonly repository: string;
  readonly auths: readonly RegistryAuth[];
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
  scheme: 'http' | 'https';
  /** Once a request went through, the scheme is known and is not retried with plain HTTP. */
  schemeSettled: boolean;
  /** The Authorization header that last worked, reused for the following requests. */
  authorization: string | undefined;
}

interface HttpResult {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function header(res: HttpResult, name: string): string | undefined {
  const value = res.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

interface Descriptor {
  digest: string;
  size: number;
}

interface IndexEntry extends Descriptor {
  /** As the index states it: any of the three may be missing. */
  platform: { [K in keyof Platform]-?: string | undefined };
}

type Manifest =
  | { kind: 'index'; entries: IndexEntry[] }
  | { kind: 'image'; digest: string; config: Descriptor; layers: Descriptor[] };

/** Thrown when no connection could be made (refused, reset, TLS failure): the plain-HTTP retry applies. */
class ConnectError extends Error {}

/**
 * The layers of `image` as its registry lists them, trying `auths` in order when the registry asks
 * for credentials. A multi-platform image resolves to the manifest of `opts.platform`.
 */
export async function fetchImageLayers(
  image: string,
  auths: readonly RegistryAuth[],
  opts: FetchLayersOptions = {},
): Promise<ImageLayers> {
  const ref = parseReference(image);
  const reference = ref.digest ?? ref.tag ?? defaultTag;
  // containerd resolves a tag on the hosts that may resolve, and fetches by digest from those that
  // may pull; it tries them in order and takes the first that answers.
  const want = isDigest(reference) ? 'pull' : 'resolve';
  const registry = defaultEndpoint(ref.domain);
  const endpoints = (opts.endpoints ?? [registry]).filter((e) => e.capabilities.has(want));
  if (endpoints.length === 0) throw new Error(`no host configured for ${ref.domain} may ${want} (capabilities)`);
  const failures: string[] = [];
  for (const endpoint of endpoints) {
    // Credentials are for the registry they were given for; a mirror is asked without them.
    const session = newSession(endpoint, ref.path, endpoint.host === registry.host || !endpoint.configured ? auths : [], opts);
    try {
      let manifest = await fetchManifest(session, reference);
      if (manifest.kind === 'index') {
        const platform = opts.platform ?? hostPlatform();
        manifest = await fetchManifest(session, choosePlatform(session, manifest.entries, platform).digest);
      }
      if (manifest.kind === 'index') {
        throw new Error(`registry ${session.host}: the index for ${session.repository} points to another index`);
      }
      const { digest, config, layers } = manifest;
      return { manifestDigest: digest, configDigest: config.digest, layers, totalBytes: layers.reduce((sum, l) => sum + l.size, 0) };
    } catch (err) {
      if (opts.signal?.aborted || endpoints.length === 1) throw err;
      failures.push(errorMessage(err));
    } finally {
      session.agent?.destroy();
    }
  }
  throw new Error(failures.join('; '));
}

function newSession(endpoint: RegistryEndpoint, repository: string, auths: readonly RegistryAuth[], opts: FetchLayersOptions): Session {
  const url = new URL(endpoint.base);
  // containerd, too, talks plain HTTP to loopback registries unless told otherwise.
  const scheme = !endpoint.configured && isLoopback(url.host) ? 'http' : (url.protocol.slice(0, -1) as 'http' | 'https');
  const tls = endpoint.ca.length > 0 || endpoint.skipVerify;
  return {
    host: url.host,
    base: `${url.host}${url.pathname.replace(/\/+$/, '')}`,
    endpoint,
    // The node's CAs stay trusted next to the configured ones, as containerd adds them to the system pool.
    // Kept alive for the session's few requests (token, index, manifest), closed when it ends.
    agent: tls ? new https.Agent({ keepAlive: true, ...(endpoint.ca.length > 0 ? { ca: [...rootCertificates, ...endpoint.ca] } : {}), rejectUnauthorized: !endpoint.skipVerify }) : undefined,
    repository,
    auths,
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? defaultTimeoutMs,
    scheme,
    // A scheme the configuration wrote is meant: no plain-HTTP retry.
    schemeSettled: endpoint.configured,
    authorization: undefined,
  };
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

function isLoopback(hostPort: string): boolean {
  const host = hostPort.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (host === 'localhost') return true;
  const family = isIP(host);
  return family !== 0 && loopback.check(host, family === 4 ? 'ipv4' : 'ipv6');
}

function hostPlatform(): Platform {
  return { os: 'linux', architecture: goArch[process.arch] ?? process.arch };
}

async function fetchManifest(session: Session, reference: string): Promise<Manifest> {
  const path = `/${session.repository}/manifests/${reference}`;
  const res = await authorizedGet(session, path, { Accept: acceptHeader });
  if (res.status < 200 || res.status > 299) throw statusError(session, reference, res);
  const digest = manifestDigest(session, reference, res);
  return parseManifest(session, digest, res);
}

function manifestDigest(session: Session, reference: string, res: HttpResult): string {
  const computed = `sha256:${createHash('sha256').update(res.body).digest('hex')}`;
  if (isDigest(reference)) {
    // A manifest asked for by digest must be that manifest; other algorithms than sha256 are trusted.
    if (reference.startsWith('sha256:') && reference !== computed) {
      throw new Error(`registry ${session.host} served ${session.repository}@${reference} with content of digest ${computed}`);
    }
    return reference;
  }
  return header(res, 'docker-content-digest') ?? computed;
}

// ---- manifests ----------------------------------------------------------------------------------

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseManifest(session: Session, digest: string, res: HttpResult): Manifest {
  const malformed = (why: string): Error =>
    new Error(`registry ${session.host}: malformed manifest ${digest} of ${session.repository}: ${why}`);
  let doc: unknown;
  try {
    doc = JSON.parse(res.body.toString('utf8'));
  } catch {
    throw malformed('not JSON');
  }
  if (!isObject(doc)) throw malformed('not a JSON object');
  const kind = manifestKind(header(res, 'content-type'), doc);
  if (kind === undefined) {
    const mediaType = typeof doc['mediaType'] === 'string' ? doc['mediaType'] : (header(res, 'content-type') ?? '');
    throw new Error(`registry ${session.host}: unsupported manifest media type "${mediaType}" for ${session.repository}`);
  }
  if (kind === 'index') {
    const entries = Array.isArray(doc['manifests']) ? doc['manifests'] : [];
    return { kind: 'index', entries: entries.map((e, i) => indexEntry(e, `manifests[${i}]`, malformed)) };
  }
  const layers = Array.isArray(doc['layers']) ? doc['layers'] : [];
  return {
    kind: 'image',
    digest,
    config: descriptor(doc['config'], 'config', malformed),
    layers: layers.map((l, i) => descriptor(l, `layers[${i}]`, malformed)),
  };
}

const indexTypes = new Set([ociIndex, dockerList]);
const imageTypes = new Set([ociManifest, dockerManifest]);

/** By the Content-Type, else the document's mediaType, else (neither names one) by the fields present. */
function manifestKind(contentType: string | undefined, doc: Record<string, unknown>): Manifest['kind'] | undefined {
  const type = contentType?.split(';')[0]?.trim() ?? '';
  const declared = indexTypes.has(type) || imageTypes.has(type) ? type : doc['mediaType'];
  if (typeof declared === 'string') {
    if (indexTypes.has(declared)) return 'index';
    return imageTypes.has(declared) ? 'image' : undefined;
  }
  if (Array.isArray(doc['manifests'])) return 'index';
  return Array.isArray(doc['layers']) && isObject(doc['config']) ? 'image' : undefined;
}

function descriptor(value: unknown, where: string, malformed: (why: string) => Error): Descriptor {
  if (!isObject(value)) throw malformed(`${where} is not an object`);
  const { digest, size } = value;
  if (typeof digest !== 'string' || !isDigest(digest)) throw malformed(`${where} has no valid digest`);
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw malformed(`${where} has no valid size`);
  return { digest, size };
}

function indexEntry(value: unknown, where: string, malformed: (why: string) => Error): IndexEntry {
  const { digest, size } = descriptor(value, where, malformed);
  const platform = isObject(value) && isObject(value['platform']) ? value['platform'] : {};
  const text = (key: string): string | undefined => (typeof platform[key] === 'string' ? platform[key] : undefined);
  return { digest, size, platform: { os: text('os'), architecture: text('architecture'), variant: text('variant') } };
}

function platformString(p: Platform | IndexEntry['platform']): string {
  return [p.os, p.architecture, p.variant].filter((s) => s !== undefined && s !== '').join('/');
}

// containerd treats arm64 without a variant and arm64/v8 as the same platform.
function normalisedVariant(architecture: string | undefined, variant: string | undefined): string {
  return architecture === 'arm64' && variant === 'v8' ? '' : (variant ?? '');
}

/** The entry for `want`; without a wanted variant the first entry of that os and architecture. */
function choosePlatform(session: Session, entries: readonly IndexEntry[], want: Platform): IndexEntry {
  const found = entries.find(
    ({ platform: p }) =>
      p.os === want.os &&
      p.architecture === want.architecture &&
      (want.variant === undefined || normalisedVariant(p.architecture, p.variant) === normalisedVariant(want.architecture, want.variant)),
  );
  if (found) return found;
  const available = entries.map((e) => platformString(e.platform)).join(', ') || 'none';
  throw new Error(
    `registry ${session.host}: no manifest for platform ${platformString(want)} in the index of ${session.repository} (available: ${available})`,
  );
}

// ---- HTTP, scheme and authentication --------------------------------------------------------------

function basic(auth: RegistryAuth): string {
  return `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
}

// node:http rather than fetch: fetch refuses some ports outright ("bad port": 1, 6000, 6665-6669,
// 10080...) that a registry may well listen on. Manifest and token requests are not redirected in
// practice (blobs are), so redirects are not followed.
function request(target: URL, headers: Record<string, string>, signal: AbortSignal, agent: https.Agent | undefined): Promise<HttpResult> {
  const get = target.protocol === 'https:' ? https.get : http.get;
  const options = target.protocol === 'https:' && agent ? { headers, signal, agent } : { headers, signal };
  return new Promise((resolve, reject) => {
    const req = get(target, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
  });
}

async function httpGet(session: Session, url: string, headers: Record<string, string>): Promise<HttpResult> {
  const timeout = AbortSignal.timeout(session.timeoutMs);
  const signal = session.signal ? AbortSignal.any([session.signal, timeout]) : timeout;
  const target = new URL(url);
  const scheme = target.protocol.slice(0, -1);
  try {
    // The body is read under the same deadline; manifests, tokens and error bodies are small.
    return await request(target, headers, signal, session.agent);
  } catch (err) {
    const what = `${scheme} request to ${target.host} for ${session.repository}`;
    if (session.signal?.aborted) throw new Error(`${what} was aborted`, { cause: err });
    if (timeout.aborted) throw new Error(`${what} timed out after ${session.timeoutMs} ms`, { cause: err });
    const code = errorCode(err);
    const message = `cannot connect to registry ${target.host} (${scheme}): ${code}`;
    throw notSchemeErrors.has(code) ? new Error(message, { cause: err }) : new ConnectError(message, { cause: err });
  }
}

/** The code of a connection failure ("ECONNREFUSED", "ERR_SSL_WRONG_VERSION_NUMBER"), else its message. */
function errorCode(err: unknown): string {
  // Duck-typed: Node's own errors fail instanceof Error inside another realm (jest's vm contexts).
  const { code, message } = (typeof err === 'object' && err !== null ? err : {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') return code;
  return typeof message === 'string' ? message : String(err);
}

/** A GET on the registry host; HTTPS that cannot connect at all is retried once over plain HTTP. */
async function registryGet(session: Session, path: string, headers: Record<string, string>): Promise<HttpResult> {
  try {
    const res = await httpGet(session, `${session.scheme}://${session.base}${path}`, { ...session.endpoint.headers, ...headers });
    session.schemeSettled = true;
    return res;
  } catch (err) {
    if (!(err instanceof ConnectError) || session.scheme === 'http' || session.schemeSettled) throw err;
    session.scheme = 'http';
    session.schemeSettled = true;
    try {
      return await httpGet(session, `http://${session.base}${path}`, { ...session.endpoint.headers, ...headers });
    } catch (httpErr) {
      const httpMessage = httpErr instanceof Error ? httpErr.message : String(httpErr);
      throw new Error(`${err.message}; plain HTTP: ${httpMessage}`, { cause: httpErr });
    }
  }
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parses `Bearer realm="...",service="...",scope="..."` (RFC 7235 auth-params, quoted or not). */
function parseChallenge(value: string | undefined): Challenge | undefined {
  const match = value?.trim().match(/^(\S+)\s*(.*)$/s);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const p of (match[2] ?? '').matchAll(/([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g)) {
    const key = p[1];
    if (key !== undefined) params[key.toLowerCase()] = p[2]?.replace(/\\(.)/g, '$1') ?? p[3] ?? '';
  }
  return { scheme: (match[1] ?? '').toLowerCase(), params };
}

/**
 * A GET that answers a 401 challenge: Basic with each credential in order; Bearer with a token from
 * the challenge's realm for each credential in order (one anonymous token when there are none).
 * The header that works is kept for the session's next requests.
 */
async function authorizedGet(session: Session, path: string, headers: Record<string, string>): Promise<HttpResult> {
  const withAuth = (authorization: string | undefined): Record<string, string> =>
    authorization === undefined ? headers : { ...headers, Authorization: authorization };
  const first = await registryGet(session, path, withAuth(session.authorization));
  if (first.status !== 401) return first;
  const challenge = parseChallenge(header(first, 'www-authenticate'));
  if (challenge?.scheme !== 'basic' && challenge?.scheme !== 'bearer') return first;
  // Credentials go in clear text only to a loopback registry (where containerd uses HTTP too);
  // byte progress is not worth leaking a password after an HTTPS-to-HTTP fallback.
  if (session.scheme === 'http' && session.auths.length > 0 && !isLoopback(session.host)) {
    throw new Error(`not sending registry credentials over plain HTTP to ${session.host}`);
  }
  const candidates: Array<RegistryAuth | undefined> =
    challenge.scheme === 'bearer' && session.auths.length === 0 ? [undefined] : [...session.auths];
  let last = first;
  for (const auth of candidates) {
    const authorization = auth && challenge.scheme === 'basic' ? basic(auth) : await bearer(session, challenge, auth);
    if (authorization === undefined) continue;
    const res = await registryGet(session, path, withAuth(authorization));
    if (res.status !== 401 && res.status !== 403) {
      session.authorization = authorization;
      return res;
    }
    last = res;
  }
  throw authError(session, last, candidates.filter((a) => a !== undefined).length);
}

/** A bearer Authorization header, or undefined when the token server refuses `auth`. */
async function bearer(session: Session, challenge: Challenge, auth: RegistryAuth | undefined): Promise<string | undefined> {
  const realm = challenge.params['realm'];
  if (!realm) throw new Error(`registry ${session.host} asked for a bearer token without naming a realm`);
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    throw new Error(`registry ${session.host} named an invalid token realm "${realm}"`);
  }
  const service = challenge.params['service'];
  if (service) url.searchParams.set('service', service);
  url.searchParams.set('scope', challenge.params['scope'] ?? `repository:${session.repository}:pull`);
  const res = await httpGet(session, url.href, auth ? { Authorization: basic(auth) } : {});
  if (res.status === 401 || res.status === 403) return undefined;
  if (res.status < 200 || res.status > 299) {
    throw new Error(`token server ${url.host} answered HTTP ${res.status} ${res.statusText} for ${session.repository} on ${session.host}`);
  }
  const token = tokenOf(res.body);
  if (token === undefined) throw new Error(`token server ${url.host} answered without a token for ${session.repository} on ${session.host}`);
  return `Bearer ${token}`;
}

function tokenOf(body: Buffer): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!isObject(doc)) return undefined;
  const token = typeof doc['token'] === 'string' && doc['token'] !== '' ? doc['token'] : doc['access_token'];
  return typeof token === 'string' && token !== '' ? token : undefined;
}

// ---- errors -------------------------------------------------------------------------------------

/** "MANIFEST_UNKNOWN: manifest unknown" from a registry's JSON error body, when it has one. */
function registryErrors(body: Buffer): string {
  try {
    const doc: unknown = JSON.parse(body.toString('utf8'));
    if (!isObject(doc) || !Array.isArray(doc['errors'])) return '';
    const errors: unknown[] = doc['errors'];
    return errors
      .filter(isObject)
      .map((e) => [e['code'], e['message']].filter((s) => typeof s === 'string' && s !== '').join(': '))
      .join('; ');
  } catch {
    return '';
  }
}

function statusLine(res: HttpResult): string {
  const detail = registryErrors(res.body);
  return `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${detail ? ` (${detail})` : ''}`;
}

function statusError(session: Session, reference: string, res: HttpResult): Error {
  const name = `${session.repository}${isDigest(reference) ? '@' : ':'}${reference}`;
  const problem = res.status === 404 ? 'not found' : 'cannot be read';
  return new Error(`manifest ${name} ${problem} in registry ${session.host}: ${statusLine(res)}`);
}

function authError(session: Session, res: HttpResult, tried: number): Error {
  const problem = tried === 0 ? 'requires credentials and none were given' : `refused the credentials (${tried} tried)`;
  return new Error(`registry ${session.host} ${problem} for repository ${session.repository}: ${statusLine(res)}`);
}
