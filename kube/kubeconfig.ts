import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { load } from 'js-yaml';
import type { ClusterAccess } from './access.js';

export class KubeConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeConfigError';
  }
}

/** The kubeconfig's user authenticates through a plugin (exec or auth-provider) this reader does not run. */
export class PluginAuthError extends KubeConfigError {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
    this.name = 'PluginAuthError';
  }
}

interface KubeConfigFile {
  clusters?: Array<{ name: string; cluster?: Record<string, unknown> }>;
  users?: Array<{ name: string; user?: Record<string, unknown> }>;
  contexts?: Array<{ name: string; context?: { cluster?: string; user?: string } }>;
  'current-context'?: string;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

function str(o: Record<string, unknown> | undefined, k: string): string | undefined {
  const v = o?.[k];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A token file re-read at most every 10 s: projected service-account tokens rotate. */
function tokenFileHeaders(path: string): () => Promise<Record<string, string>> {
  let cached = { at: 0, token: '' };
  return () => {
    if (Date.now() - cached.at > 10_000) cached = { at: Date.now(), token: readFileSync(path, 'utf8').trim() };
    return Promise.resolve({ Authorization: `Bearer ${cached.token}` });
  };
}

function fromFile(path: string): ClusterAccess {
  let doc: KubeConfigFile;
  try {
    doc = load(readFileSync(path, 'utf8')) as KubeConfigFile;
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  const ctxName = doc['current-context'];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new KubeConfigError(`kubeconfig ${path} has no current context (current-context: ${ctxName ?? 'unset'})`);
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  const server = str(cluster, 'server');
  if (!cluster || !server) throw new KubeConfigError(`kubeconfig ${path}: context ${ctxName} names no cluster with a server`);
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const base = dirname(path);
  const file = (p: string): Buffer => readFileSync(isAbsolute(p) ? p : join(base, p));
  const data = (o: Record<string, unknown>, k: string): Buffer | undefined => {
    const inline = str(o, `${k}-data`);
    if (inline) return Buffer.from(inline, 'base64');
    const f = str(o, k);
    return f ? file(f) : undefined;
  };
  if (user['exec'] || user['auth-provider']) {
    throw new PluginAuthError(`kubeconfig ${path}: user ${ctx.user} needs an exec or auth-provider plugin, which kruise-daemon does not run; use a token or client certificate`, path);
  }
  const token = str(user, 'token');
  const tokenFile = str(user, 'tokenFile');
  const username = str(user, 'username');
  const password = str(user, 'password');
  const ca = data(cluster, 'certificate-authority');
  const cert = data(user, 'client-certificate');
  const key = data(user, 'client-key');
  return {
    server,
    ca,
    cert,
    key,
    insecureSkipTlsVerify: cluster['insecure-skip-tls-verify'] === true,
    headers: token
      ? () => Promise.resolve({ Authorization: `Bearer ${token}` })
      : tokenFile
        ? tokenFileHeaders(isAbsolute(tokenFile) ? tokenFile : join(base, tokenFile))
        : username && password
          ? () => Promise.resolve({ Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` })
          : () => Promise.resolve({}),
  };
}

function inCluster(): ClusterAccess {
  const host = process.env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = process.env['KUBERNETES_SERVICE_PORT'] ?? '443';
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    ca: readFileSync(join(SERVICE_ACCOUNT_DIR, 'ca.crt')),
    headers: tokenFileHeaders(join(SERVICE_ACCOUNT_DIR, 'token')),
  };
}

/** Where client configuration comes from: a kubeconfig file, or the pod's service account. */
export type ConfigSource = { kind: 'file'; path: string } | { kind: 'in-cluster' };

/**
 * The precedence kubectl and controller-runtime use: an explicit --kubeconfig, then $KUBECONFIG
 * (its first entry), then the in-cluster service account, then ~/.kube/config. Both readers (this
 * module's lean one and client-node's for the manager) follow it.
 */
export function configSource(explicitPath: string): ConfigSource {
  if (explicitPath !== '') {
    if (!existsSync(explicitPath)) throw new KubeConfigError(`--kubeconfig ${explicitPath} does not exist`);
    return { kind: 'file', path: explicitPath };
  }
  const kubeconfig = process.env['KUBECONFIG'];
  if (kubeconfig) {
    const first = kubeconfig.split(':').find((p) => p !== '');
    if (!first || !existsSync(first)) throw new KubeConfigError(`KUBECONFIG=${kubeconfig} names no existing file`);
    return { kind: 'file', path: first };
  }
  if (process.env['KUBERNETES_SERVICE_HOST'] && existsSync(join(SERVICE_ACCOUNT_DIR, 'token'))) return { kind: 'in-cluster' };
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return { kind: 'file', path: home };
  throw new KubeConfigError('no Kubernetes configuration: pass --kubeconfig PATH, set KUBECONFIG, or run in a pod with a service account');
}

/**
 * Client configuration in configSource's precedence, read by a small reader of its own (tokens,
 * token files, client certificates, CA, in-cluster) that keeps the daemon free of client-node.
 */
export function loadClusterAccess(explicitPath: string): ClusterAccess {
  const source = configSource(explicitPath);
  return source.kind === 'file' ? fromFile(source.path) : inCluster();
}

/**
 * The manager's client configuration: the lean reader, and client-node's (every authentication
 * kubectl supports: exec plugins, OIDC, ...) only for a kubeconfig that needs a plugin. Loading
 * client-node brings its whole generated API (about 50 MiB of the process's memory), which a
 * token, certificate or in-cluster configuration never needs.
 */
export async function loadManagerClusterAccess(explicitPath: string): Promise<ClusterAccess> {
  try {
    return loadClusterAccess(explicitPath);
  } catch (err) {
    if (!(err instanceof PluginAuthError)) throw err;
    const { accessFromKubeConfig, loadKubeConfig } = await import('./clientnode.js');
    return accessFromKubeConfig(loadKubeConfig(err.path));
  }
}
