import { stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { CriClient, socketPath } from './client.js';
import { CriError } from './errors.js';

export interface RuntimeCandidate {
  runtime: string;
  path: string;
}

/** Where the kubelet ecosystem puts CRI sockets, in the order they are tried. */
const wellKnownSockets: readonly RuntimeCandidate[] = [
  { runtime: 'containerd', path: '/run/containerd/containerd.sock' },
  { runtime: 'containerd', path: '/var/run/containerd/containerd.sock' },
  { runtime: 'k3s', path: '/run/k3s/containerd/containerd.sock' },
  { runtime: 'cri-o', path: '/run/crio/crio.sock' },
  { runtime: 'cri-o', path: '/var/run/crio/crio.sock' },
  { runtime: 'cri-dockerd', path: '/run/cri-dockerd.sock' },
  { runtime: 'cri-dockerd', path: '/var/run/cri-dockerd.sock' },
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

async function probe(path: string, timeoutMs: number): Promise<{ attempt: ProbeAttempt; found?: DetectedRuntime }> {
  try {
    const st = await stat(path);
    if (!st.isSocket()) return { attempt: { path, ok: false, reason: 'exists but is not a socket' } };
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
      found: {
        endpoint: `unix://${path}`,
        runtimeName: v.runtime_name,
        runtimeVersion: v.runtime_version,
        apiVersion: v.runtime_api_version,
        attempts: [],
      },
    };
  } catch (err) {
    const reason =
      err instanceof CriError && err.kind === 'unimplemented'
        ? 'CRI runtime.v1 is not implemented by this runtime'
        : err instanceof CriError && (err.kind === 'unavailable' || err.kind === 'deadline')
          ? `nothing answers on the socket within ${timeoutMs} ms (${err.details})`
          : `Version failed: ${err instanceof Error ? err.message : String(err)}`;
    return { attempt: { path, ok: false, reason } };
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

/** Finds the node's CRI runtime.v1 endpoint the way kubelet tooling does, explaining every rejection. */
export async function detectRuntime(opts: DetectOptions = {}): Promise<DetectedRuntime> {
  const timeoutMs = opts.timeoutMs ?? 3_000;
  const paths = opts.endpoint
    ? [socketPath(opts.endpoint)]
    : (opts.candidates ?? wellKnownSockets).map((c) => join(opts.hostRoot ?? '/', c.path));
  const attempts: ProbeAttempt[] = [];
  for (const path of paths) {
    const { attempt, found } = await probe(path, timeoutMs);
    attempts.push(attempt);
    if (found) return { ...found, attempts };
  }
  throw new RuntimeDetectionError(attempts);
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
