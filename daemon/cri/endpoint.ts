import { stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CriClient, socketPath } from './client.js';
import { CriError } from './errors.js';
import { criV1alpha2Proto } from './proto.js';

export interface RuntimeCandidate {
  runtime: string;
  path: string;
}

/**
 * Where the kubelet ecosystem puts CRI sockets, in the order they are tried: every path upstream
 * probes under the host's /var/run (pkg/daemon/criruntime/factory_unix.go), each also under /run
 * (the DaemonSet mounts both: a hostPath follows the host's /var/run -> /run link, a host-root
 * prefix would not), and k3s's containerd.
 */
export const wellKnownSockets: readonly RuntimeCandidate[] = [
  { runtime: 'containerd', path: '/run/containerd/containerd.sock' },
  { runtime: 'containerd', path: '/var/run/containerd/containerd.sock' },
  { runtime: 'containerd', path: '/run/containerd.sock' },
  { runtime: 'containerd', path: '/var/run/containerd.sock' },
  { runtime: 'k3s', path: '/run/k3s/containerd/containerd.sock' },
  { runtime: 'cri-o', path: '/run/crio/crio.sock' },
  { runtime: 'cri-o', path: '/var/run/crio/crio.sock' },
  { runtime: 'cri-o', path: '/run/crio.sock' },
  { runtime: 'cri-o', path: '/var/run/crio.sock' },
  { runtime: 'cri-dockerd', path: '/run/cri-dockerd.sock' },
  { runtime: 'cri-dockerd', path: '/var/run/cri-dockerd.sock' },
  { runtime: 'cri-dockerd', path: '/run/cri-dockerd/cri-dockerd.sock' },
  { runtime: 'cri-dockerd', path: '/var/run/cri-dockerd/cri-dockerd.sock' },
];

export interface ProbeAttempt {
  path: string;
  ok: boolean;
  reason: string;
}

export interface DetectedRuntime {
  endpoint: string;
  runtimeName: string;
  runtimeVersion: string;
  apiVersion: string;
  attempts: ProbeAttempt[];
  /**
   * Other sockets that answer CRI v1 too, not the same socket by another path: two runtimes on one
   * node (a migration) where the first in order was taken, which may not be the kubelet's.
   */
  alsoFound: string[];
}

export class RuntimeDetectionError extends Error {
  constructor(readonly attempts: ProbeAttempt[]) {
    super(
      'no usable CRI runtime.v1 socket found; tried:\n' +
        attempts.map((a) => `  ${a.path}: ${a.reason}`).join('\n') +
        '\nset --runtime-endpoint (unix:///path/to/socket) or mount the host runtime socket under --host-root',
    );
    this.name = 'RuntimeDetectionError';
  }
}

async function probe(path: string, timeoutMs: number): Promise<{ attempt: ProbeAttempt; found?: DetectedRuntime; inode?: string }> {
  let inode: string;
  try {
    const st = await stat(path);
    if (!st.isSocket()) return { attempt: { path, ok: false, reason: 'exists but is not a socket' } };
    inode = `${st.dev}:${st.ino}`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { attempt: { path, ok: false, reason: code === 'ENOENT' ? 'missing' : `cannot stat: ${code ?? String(err)}` } };
  }
  const client = new CriClient(path);
  try {
    // A runtime that is still starting answers "not initialized": give it the probe's time.
    const v = await client.runtime('Version', { version: 'v1' }, { timeoutMs, waitForReady: true });
    if (!/^v1(\.|$)/.test(v.runtime_api_version)) {
      return { attempt: { path, ok: false, reason: `speaks CRI ${v.runtime_api_version || '(unknown)'}, not v1` } };
    }
    const attempt = { path, ok: true, reason: `${v.runtime_name} ${v.runtime_version}, CRI ${v.runtime_api_version}` };
    return {
      attempt,
      inode,
      found: {
        endpoint: `unix://${path}`,
        runtimeName: v.runtime_name,
        runtimeVersion: v.runtime_version,
        apiVersion: v.runtime_api_version,
        attempts: [],
        alsoFound: [],
      },
    };
  } catch (err) {
    const reason =
      err instanceof CriError && err.kind === 'unimplemented'
        ? await withoutV1(path, timeoutMs)
        : err instanceof CriError && (err.kind === 'unavailable' || err.kind === 'deadline')
          ? `nothing answers on the socket within ${timeoutMs} ms (${err.details})`
          : `Version failed: ${err instanceof Error ? err.message : String(err)}`;
    return { attempt: { path, ok: false, reason } };
  } finally {
    client.close();
  }
}

/**
 * Why a runtime that does not implement runtime.v1 is refused: an outdated one that speaks only
 * v1alpha2 is named, with what to upgrade to.
 */
async function withoutV1(path: string, timeoutMs: number): Promise<string> {
  const Service = criV1alpha2Proto().runtime.v1alpha2.RuntimeService;
  const client = new Service(`unix://${path}`, grpc.credentials.createInsecure());
  try {
    const v = await new Promise<{ runtime_name: string; runtime_version: string } | undefined>((resolve) => {
      client.Version({ version: 'v1alpha2' }, { deadline: Date.now() + timeoutMs }, (err, res) => resolve(err || !res ? undefined : res));
    });
    return v
      ? `${v.runtime_name} ${v.runtime_version} speaks only CRI v1alpha2; kruise-daemon needs runtime.v1, as kubelet 1.26+ does (containerd 1.6+, CRI-O 1.23+, cri-dockerd 0.3+)`
      : 'CRI runtime.v1 is not implemented by this runtime';
  } finally {
    client.close();
  }
}

export interface DetectOptions {
  /** An explicit endpoint (--runtime-endpoint / --socket-file): only it is tried. */
  endpoint?: string | undefined;
  /** Prefix for the well-known paths, where the host's /run and /var/run are mounted. */
  hostRoot?: string;
  candidates?: readonly RuntimeCandidate[];
  timeoutMs?: number;
}

/**
 * Finds the node's CRI runtime.v1 endpoint the way kubelet tooling does, explaining every
 * rejection. The first usable candidate in order is taken (upstream's order: containerd, CRI-O,
 * cri-dockerd); the others are still probed so that a second runtime on the node is reported.
 */
export async function detectRuntime(opts: DetectOptions = {}): Promise<DetectedRuntime> {
  const timeoutMs = opts.timeoutMs ?? 3_000;
  const paths = opts.endpoint
    ? [socketPath(opts.endpoint)]
    : (opts.candidates ?? wellKnownSockets).map((c) => join(opts.hostRoot ?? '/', c.path));
  const attempts: ProbeAttempt[] = [];
  let chosen: { found: DetectedRuntime; inode: string | undefined } | undefined;
  const seen = new Set<string>();
  const alsoFound: string[] = [];
  for (const path of paths) {
    const { attempt, found, inode } = await probe(path, timeoutMs);
    attempts.push(attempt);
    if (!found) continue;
    // /run/x and /var/run/x are one socket on most hosts: one runtime, not two.
    if (inode !== undefined && seen.has(inode)) continue;
    if (inode !== undefined) seen.add(inode);
    if (!chosen) chosen = { found, inode };
    else alsoFound.push(`${found.endpoint} (${found.runtimeName} ${found.runtimeVersion})`);
  }
  if (!chosen) throw new RuntimeDetectionError(attempts);
  return { ...chosen.found, attempts, alsoFound };
}

/**
 * Whether the runtime's socket accepts a new connection now. The CRI client's channel can keep
 * answering over a connection made before the socket went away (deleted or replaced); a new
 * connection tells, as the next start of the daemon would find out.
 */
export function socketAccepts(endpoint: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath(endpoint));
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
