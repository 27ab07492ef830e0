// A container's preStop hook run the way the kubelet runs it: exec inside the container through
// the runtime, httpGet from the node against the pod. tcpSocket hooks, which the kubelet ignores,
// open and close a connection (an application can take it as its cue to drain).
import type { ContainerPort } from '../../api/types/core.js';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { failedExecPreStopHookMessage, failedHttpPreStopHookMessage, failedTcpPreStopHookMessage } from '../../api/events.js';
import type { ProbeHandler } from '../../api/types/containerrecreaterequest.js';
import type { CriClient } from '../cri/client.js';

export interface PreStopContext {
  cri: CriClient;
  containerId: string;
  containerName: string;
  ports: ContainerPort[];
  pod: { name: string; namespace: string; uid: string };
  /** The pod's address for hooks without a host. */
  podAddress: () => Promise<string>;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** Runs the hook; resolves to undefined on success, or to the FailedPreStopHook event message. */
export async function runPreStop(hook: ProbeHandler, ctx: PreStopContext): Promise<string | undefined> {
  if (hook.exec?.command !== undefined && hook.exec.command.length > 0) return execHook(hook.exec.command, ctx);
  if (hook.httpGet !== undefined) return httpHook(hook.httpGet, ctx);
  if (hook.tcpSocket !== undefined) return tcpHook(hook.tcpSocket, ctx);
  return undefined;
}

async function execHook(command: string[], ctx: PreStopContext): Promise<string | undefined> {
  try {
    const res = await ctx.cri.runtime(
      'ExecSync',
      { container_id: ctx.containerId, cmd: command, timeout: String(Math.max(1, Math.ceil(ctx.timeoutMs / 1000))) },
      { timeoutMs: ctx.timeoutMs + 5_000, signal: ctx.signal },
    );
    if (res.exit_code === 0) return undefined;
    const output = Buffer.concat([Buffer.from(res.stdout), Buffer.from(res.stderr)]).toString('utf8');
    return failedExecPreStopHookMessage(command, ctx.containerName, ctx.pod, `command '${command.join(' ')}' exited with ${res.exit_code}: ${output}`, output);
  } catch (err) {
    return failedExecPreStopHookMessage(command, ctx.containerName, ctx.pod, (err as Error).message, '');
  }
}

/** A port number, or a named port of the container. */
export function resolvePort(port: number | string, ports: readonly ContainerPort[]): number | undefined {
  if (typeof port === 'number') return port > 0 && port < 65536 ? port : undefined;
  if (/^\d+$/.test(port)) return resolvePort(Number(port), ports);
  return ports.find((p) => p.name === port)?.containerPort;
}

async function httpHook(action: NonNullable<ProbeHandler['httpGet']>, ctx: PreStopContext): Promise<string | undefined> {
  const path = action.path ?? '';
  const fail = (error: string, body = ''): string => failedHttpPreStopHookMessage(path, ctx.containerName, ctx.pod, error, body);
  const port = resolvePort(action.port, ctx.ports);
  if (port === undefined) return fail(`invalid port ${JSON.stringify(action.port)}`);
  let host: string;
  try {
    host = action.host !== undefined && action.host !== '' ? action.host : await ctx.podAddress();
  } catch (err) {
    return fail(`cannot find the pod's address: ${(err as Error).message}`);
  }
  const https = (action.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
  const headers: Record<string, string> = { 'User-Agent': 'kube-lifecycle/1.20' };
  for (const h of action.httpHeaders ?? []) headers[h.name] = h.value;
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(
      {
        host,
        port,
        path: path.startsWith('/') ? path : `/${path}`,
        method: 'GET',
        headers,
        timeout: ctx.timeoutMs,
        rejectUnauthorized: false,
        signal: ctx.signal,
        // The kubelet's Go client takes header lines ended by a bare LF, as servers such as busybox
        // httpd send them from CGI scripts; Node's strict parser (20.x since llhttp 9) refuses them,
        // which turned a hook the application had run into a FailedPreStopHook. The answer is
        // discarded, so the lenient parser costs nothing here.
        insecureHTTPParser: true,
      },
      (res) => {
        // As the kubelet: any answer is success; only failing to get one is a failure.
        res.resume();
        res.on('end', () => resolve(undefined));
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${ctx.timeoutMs} ms`)));
    req.on('error', (err) => resolve(fail(err.message)));
    req.end();
  });
}

async function tcpHook(action: NonNullable<ProbeHandler['tcpSocket']>, ctx: PreStopContext): Promise<string | undefined> {
  const port = resolvePort(action.port, ctx.ports);
  let host: string;
  try {
    host = action.host !== undefined && action.host !== '' ? action.host : await ctx.podAddress();
  } catch (err) {
    return failedTcpPreStopHookMessage(`:${String(action.port)}`, ctx.containerName, ctx.pod, `cannot find the pod's address: ${(err as Error).message}`);
  }
  const address = `${host}:${port ?? String(action.port)}`;
  if (port === undefined) return failedTcpPreStopHookMessage(address, ctx.containerName, ctx.pod, `invalid port ${JSON.stringify(action.port)}`);
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: ctx.timeoutMs });
    const done = (error?: string): void => {
      socket.destroy();
      resolve(error === undefined ? undefined : failedTcpPreStopHookMessage(address, ctx.containerName, ctx.pod, error));
    };
    socket.once('connect', () => done());
    socket.once('timeout', () => done(`timeout after ${ctx.timeoutMs} ms`));
    socket.once('error', (err) => done(err.message));
    ctx.signal?.addEventListener('abort', () => done('aborted'), { once: true });
  });
}
