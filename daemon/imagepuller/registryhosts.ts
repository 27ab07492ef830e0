// The registry hosts containerd pulls an image's manifest from, read from the same host
// configuration it uses (`config_path`: <dir>/<registry>/hosts.toml, containerd's
// remotes/docker/config/hosts.go), so byte progress is read where containerd reads: through a
// mirror, with a private CA or with skip_verify. Without a configuration, the registry itself.

import { readFileSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { parse, TomlError } from 'smol-toml';
import { defaultDomain } from '../../api/image-reference.js';
import { errorMessage } from '../../kube/log.js';

export interface RegistryEndpoint {
  /** scheme://host[:port] and the path ending in /v2 that the registry API lives under. */
  base: string;
  /** host[:port] of `base`, for messages and the credentials rule. */
  host: string;
  /** PEM certificates to trust besides the system's (hosts.toml `ca`, docker-style `*.crt`). */
  ca: string[];
  skipVerify: boolean;
  headers: Record<string, string>;
  capabilities: Set<'pull' | 'resolve' | 'push'>;
  /** Written in a configuration (its scheme is meant): no plain-HTTP retry. */
  configured: boolean;
}

/** What to fetch manifests from for one registry, in containerd's order, and where that came from. */
export interface RegistryHosts {
  endpoints: RegistryEndpoint[];
  /** The hosts.toml or certs.d folder read, when one was. */
  source?: string;
}

// Docker Hub serves its registry API on another host than the name images carry.
const dockerHubRegistry = 'registry-1.docker.io';
const allCapabilities = ['pull', 'resolve', 'push'] as const;

/** host[:port] containerd talks to for a registry with no `server` configured. */
function defaultServer(registry: string): string {
  return registry === defaultDomain ? dockerHubRegistry : registry;
}

/** The registry itself, as containerd reaches it with no configuration. */
export function defaultEndpoint(registry: string): RegistryEndpoint {
  const host = defaultServer(registry);
  return { base: `https://${host}/v2`, host, ca: [], skipVerify: false, headers: {}, capabilities: new Set(allCapabilities), configured: false };
}

/** Reads a file the configuration names: relative to its folder, absolute paths on the host. */
export type FileReader = (path: string) => string;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strings(v: unknown, what: string): string[] {
  if (v === undefined) return [];
  if (typeof v === 'string') return [v];
  if (Array.isArray(v) && v.every((x): x is string => typeof x === 'string')) return v;
  throw new Error(`${what} must be a string or a list of strings`);
}

/**
 * The endpoints of one hosts.toml, as containerd reads it: every `[host."URL"]` in the order written,
 * then `server` (default https://<registry>); `capabilities` default to pull, resolve and push; a URL
 * path gets /v2 appended unless `override_path`; `ca` paths are relative to the file's folder.
 * Client certificates are containerd's business: manifests are read without them.
 */
export function parseHostsToml(text: string, registry: string, readCa: FileReader): RegistryEndpoint[] {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text);
  } catch (err) {
    throw new Error(`invalid TOML: ${err instanceof TomlError ? err.message.split('\n')[0] : String(err)}`, { cause: err });
  }
  const endpoint = (url: string, table: Record<string, unknown>, where: string): RegistryEndpoint => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new Error(`${where}: "${url}" is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${where}: "${url}" is neither http nor https`);
    const caps = strings(table['capabilities'], `${where}.capabilities`);
    const unknown = caps.filter((c) => !(allCapabilities as readonly string[]).includes(c));
    if (unknown.length > 0) throw new Error(`${where}.capabilities: unknown ${unknown.join(', ')}`);
    let path = u.pathname.replace(/\/+$/, '');
    if (table['override_path'] !== true && !path.endsWith('/v2')) path = `${path}/v2`;
    const headers: Record<string, string> = {};
    const h = table['header'];
    if (isRecord(h)) for (const [k, v] of Object.entries(h)) headers[k] = strings(v, `${where}.header.${k}`).join(', ');
    return {
      base: `${u.protocol}//${u.host}${path}`,
      host: u.host,
      ca: strings(table['ca'], `${where}.ca`).map(readCa),
      skipVerify: table['skip_verify'] === true,
      headers,
      capabilities: new Set((caps.length > 0 ? caps : allCapabilities) as ReadonlyArray<'pull' | 'resolve' | 'push'>),
      configured: true,
    };
  };
  const out: RegistryEndpoint[] = [];
  const hosts = doc['host'];
  if (isRecord(hosts)) {
    for (const [url, table] of Object.entries(hosts)) out.push(endpoint(url, isRecord(table) ? table : {}, `host."${url}"`));
  }
  const server = typeof doc['server'] === 'string' ? doc['server'] : undefined;
  if (server !== undefined) out.push(endpoint(server, doc, 'server'));
  else out.push({ ...endpoint(`https://${defaultServer(registry)}`, doc, 'server'), configured: false });
  return out;
}

/**
 * The registry's endpoints from the first of `dirs` (already under the host root) that holds a
 * folder for it (or `_default`): its hosts.toml, else docker-style `*.crt` files as CAs for the
 * registry itself. Absolute `ca` paths are host paths, read under `hostRoot`.
 */
export function registryHosts(registry: string, dirs: readonly string[], hostRoot = '/'): RegistryHosts {
  for (const dir of dirs) {
    for (const name of [registry, '_default']) {
      const folder = join(dir, name);
      if (!isDirectory(folder)) continue;
      const file = join(folder, 'hosts.toml');
      const readCa: FileReader = (p) => readFileSync(isAbsolute(p) ? join(hostRoot, p) : join(folder, p), 'utf8');
      let text: string | undefined;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        text = undefined;
      }
      if (text !== undefined) {
        try {
          return { endpoints: parseHostsToml(text, registry, readCa), source: file };
        } catch (err) {
          throw new Error(`${file}: ${errorMessage(err)}`, { cause: err });
        }
      }
      const certs = readdirSync(folder).filter((f) => f.endsWith('.crt'));
      return { endpoints: [{ ...defaultEndpoint(registry), ca: certs.map((f) => readFileSync(join(folder, f), 'utf8')) }], source: folder };
    }
  }
  return { endpoints: [defaultEndpoint(registry)] };
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
