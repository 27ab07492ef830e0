// Registry credentials from Kubernetes pull secrets, matched to images with the kubelet's keyring
// rules (k8s.io/kubernetes pkg/credentialprovider/keyring.go), so an ImagePullJob pulls with the
// same credentials a Pod using the same secrets would.

import { defaultDomain, parseReference } from '../../api/image-reference.js';
import { SECRET_KEY_DOCKER_CONFIG_JSON, SECRET_KEY_DOCKERCFG, SECRET_TYPE_DOCKER_CONFIG_JSON, SECRET_TYPE_DOCKERCFG } from '../../api/metadata-keys.js';
import type { Secret } from '../../api/types/core.js';

export interface RegistryAuth {
  username: string;
  password: string;
}

export interface KeyringEntry {
  /** The key of the docker config entry as written: "https://index.docker.io/v1/", "*.example.com". */
  server: string;
  auth: RegistryAuth;
  /** "namespace/name" of the secret the entry comes from. */
  source: string;
}

/** A pull secret that cannot be used. The message names the secret and the problem, never a secret value. */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialError';
  }
}

function secretError(source: string, problem: string): CredentialError {
  return new CredentialError(`secret ${source}: ${problem}`);
}

const dataKeys = new Map([
  [SECRET_TYPE_DOCKER_CONFIG_JSON, SECRET_KEY_DOCKER_CONFIG_JSON],
  [SECRET_TYPE_DOCKERCFG, SECRET_KEY_DOCKERCFG],
]);

// Docker Hub is reachable under several names, and docker config files use all of them
// ("https://index.docker.io/v1/" is what `docker login` writes); they all mean images on docker.io.
const dockerHubAliases = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

// Strict standard base64 with padding, as Go's base64.StdEncoding (which the kubelet uses) expects;
// Buffer.from(s, 'base64') silently skips invalid characters instead.
const base64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(value: string): string | undefined {
  return base64Re.test(value) ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function secretSource(secret: Secret): string {
  return `${secret.metadata?.namespace ?? '<no namespace>'}/${secret.metadata?.name ?? '<no name>'}`;
}

/**
 * The credentials of a `kubernetes.io/dockerconfigjson` or `kubernetes.io/dockercfg` secret, one
 * entry per registry key, in the order of the file. Entries that only carry an identitytoken or
 * registrytoken are skipped, as the kubelet's keyring skips them: it only reads username/password
 * and auth, so a Pod with the same secret would not use those tokens either.
 */
export function parseDockerSecret(secret: Secret): KeyringEntry[] {
  const source = secretSource(secret);
  const type = secret.type;
  const key = type === undefined ? undefined : dataKeys.get(type);
  if (type === undefined || key === undefined) {
    const got = type === undefined ? 'no type' : `type "${type}"`;
    throw secretError(source, `has ${got}, expected ${SECRET_TYPE_DOCKER_CONFIG_JSON} or ${SECRET_TYPE_DOCKERCFG}`);
  }
  const encoded = secret.data?.[key];
  if (encoded === undefined) throw secretError(source, `data has no ${key} key`);
  const text = decodeBase64(encoded);
  if (text === undefined) throw secretError(source, `${key} is not valid base64`);
  if (text.trim() === '') throw secretError(source, `${key} is empty`);
  const auths = authsOf(source, key, type, text);
  const entries: KeyringEntry[] = [];
  for (const [server, value] of Object.entries(auths)) {
    const auth = parseEntry(source, key, server, value);
    if (auth !== undefined) entries.push({ server, auth, source });
  }
  return entries;
}

function authsOf(source: string, key: string, type: string, text: string): Record<string, unknown> {
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the error, which may be a password.
    throw secretError(source, `${key} is not valid JSON`);
  }
  if (!isObject(config)) throw secretError(source, `${key} is not a JSON object`);
  if (type === SECRET_TYPE_DOCKERCFG) return config;
  const auths = config['auths'];
  if (auths === undefined) throw secretError(source, `${key} has no "auths" object`);
  if (!isObject(auths)) throw secretError(source, `"auths" in ${key} is not an object`);
  return auths;
}

function parseEntry(source: string, key: string, server: string, value: unknown): RegistryAuth | undefined {
  const where = `entry "${server}" in ${key}`;
  if (!isObject(value)) throw secretError(source, `${where} is not an object`);
  for (const field of ['auth', 'username', 'password']) {
    if (value[field] !== undefined && typeof value[field] !== 'string') {
      throw secretError(source, `${where}: "${field}" is not a string`);
    }
  }
  const { auth, username, password } = value as { auth?: string; username?: string; password?: string };
  // Like docker and the kubelet, a non-empty "auth" wins over username/password.
  if (auth !== undefined && auth !== '') return decodeAuthField(source, where, auth);
  if (username !== undefined && password !== undefined) return { username, password };
  // Token logins (Azure ACR writes a placeholder username with an identitytoken) are skipped.
  if (value['identitytoken'] !== undefined || value['registrytoken'] !== undefined) return undefined;
  if (username !== undefined) throw secretError(source, `${where} has a username but no password`);
  if (password !== undefined) throw secretError(source, `${where} has a password but no username`);
  throw secretError(source, `${where} has neither "auth" nor "username" and "password"`);
}

function decodeAuthField(source: string, where: string, auth: string): RegistryAuth {
  const decoded = decodeBase64(auth);
  if (decoded === undefined) throw secretError(source, `${where}: "auth" is not valid base64`);
  const colon = decoded.indexOf(':');
  if (colon === -1) throw secretError(source, `${where}: "auth" does not decode to username:password`);
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

interface Location {
  /** Lowercase host name split at dots; in a keyring key each part may be a glob. */
  hostParts: string[];
  /** "" when none is given. */
  port: string;
  /** Path segments: a key's prefix, or an image's repository path. */
  path: string[];
}

function splitHostPort(hostPort: string): { host: string; port: string } {
  const colon = hostPort.lastIndexOf(':');
  // A colon inside "[::1]" is part of the IPv6 address, not a port separator.
  if (colon === -1 || hostPort.endsWith(']')) return { host: hostPort, port: '' };
  return { host: hostPort.slice(0, colon), port: hostPort.slice(colon + 1) };
}

function location(hostPort: string, path: string[]): Location {
  const { host, port } = splitHostPort(hostPort.toLowerCase());
  const normalised = port === '' && dockerHubAliases.has(host) ? defaultDomain : host;
  return { hostParts: normalised.split('.'), port, path };
}

/** Parses a keyring key the way the kubelet does: scheme optional, "/v1/" and "/v2/" mean the host. */
function keyLocation(server: string): Location {
  const schemeless = server.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = schemeless.indexOf('/');
  const hostPort = slash === -1 ? schemeless : schemeless.slice(0, slash);
  const path = (slash === -1 ? '' : schemeless.slice(slash)).replace(/^\/v[12](?=\/|$)/, '');
  return location(hostPort, path.split('/').filter((segment) => segment !== ''));
}

function imageLocation(image: string): Location {
  const ref = parseReference(image);
  return location(ref.domain, ref.path.split('/'));
}

function globMatch(glob: string, value: string): boolean {
  const pattern = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${pattern}$`).test(value);
}

function keyMatches(key: Location, image: Location): boolean {
  if (key.port !== image.port || key.hostParts.length !== image.hostParts.length) return false;
  if (key.path.length > image.path.length || key.path.some((s, i) => s !== image.path[i])) return false;
  return key.hostParts.every((part, i) => globMatch(part, image.hostParts[i] ?? ''));
}

/** Length of the normalised key: a longer host or path prefix names fewer images. */
function specificity(key: Location): number {
  const host = key.hostParts.join('.') + (key.port === '' ? '' : `:${key.port}`);
  return [host, ...key.path].join('/').length;
}

/**
 * The credentials to try, in order, for pulling `image`: those of every matching entry, the most
 * specific key first and entries with equally specific keys in the order given, without duplicates.
 * A key matches when its host (each dot-separated part may be a `*`/`?` glob) has as many parts as
 * the image's registry host and matches each part, its port equals the registry's port (none
 * matches none), and its path is a prefix of the repository path on `/` boundaries.
 */
export function credentialsFor(image: string, entries: readonly KeyringEntry[]): RegistryAuth[] {
  const target = imageLocation(image);
  const matches = entries
    .map((entry) => ({ entry, key: keyLocation(entry.server) }))
    .filter(({ key }) => keyMatches(key, target))
    .map(({ entry, key }) => ({ auth: entry.auth, rank: specificity(key) }));
  // Array.prototype.sort is stable, which keeps equally specific entries in the order given.
  matches.sort((a, b) => b.rank - a.rank);
  const seen = new Set<string>();
  const result: RegistryAuth[] = [];
  for (const { auth } of matches) {
    const id = JSON.stringify([auth.username, auth.password]);
    if (seen.has(id)) continue;
    seen.add(id);
    result.push({ username: auth.username, password: auth.password });
  }
  return result;
}
