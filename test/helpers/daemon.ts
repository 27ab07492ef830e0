import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CriClient } from '../../daemon/cri/client.js';
import { Daemon, type DaemonConfig } from '../../daemon/daemon.js';
import type { ImageTagStatus, NodeImage } from '../../api/types/nodeimage.js';
import { Resource } from '../../kube/resource.js';
import { portOffset } from '../../hack/kruise.js';
import type { RestClient } from '../../kube/rest.js';
import { clusterEnv, kruise } from './kube.js';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE } from '../../api/installation.js';

const root = join(import.meta.dirname, '..', '..');

/** The hack/ environment variables that name the environment under test. */
function hackEnv(): NodeJS.ProcessEnv {
  const env = clusterEnv();
  const offset = portOffset(env);
  return { ...process.env, KRUISE_TS_ENV: env.envName, KRUISE_TS_PORT_OFFSET: String(offset) };
}

/** A containerd of the suite's own (restarting it disturbs no other suite). */
export function privateContainerd(name: string): { dir: string; socket: string; ctl: (verb: 'start' | 'stop' | 'restart' | 'down') => void; pullLog: () => string[] } {
  const dir = join(clusterEnv().envDir, `ctrd-${name}`);
  mkdirSync(dir, { recursive: true });
  const ctl = (verb: 'start' | 'stop' | 'restart' | 'down' | 'up'): void => {
    execFileSync('bash', [join(root, 'hack', 'containerd.sh'), verb, dir], { env: hackEnv(), stdio: 'pipe' });
  };
  ctl('up');
  return {
    dir,
    socket: join(dir, 'containerd.sock'),
    ctl,
    pullLog: () => pullLog(dir),
  };
}

/**
 * The PullImage calls a containerd started by hack/ (in `dir`) received, one line each: its CRI logs
 * `PullImage "<ref>"` when a pull call starts (and another line, with "returns", when it ends).
 */
function pullLog(dir: string): string[] {
  return readFileSync(join(dir, 'logs', 'containerd.log'), 'utf8').split('\n').filter((l) => /msg="PullImage \\"[^"\\]*\\""/.test(l));
}

export interface InProcessDaemon {
  daemon: Daemon;
  cri: CriClient;
  stop: () => Promise<void>;
}

/** The real daemon code, in this process, against a real API server and containerd. */
export function startDaemon(node: string, rest: RestClient, socket: string, over: Partial<DaemonConfig> = {}): InProcessDaemon {
  const cri = new CriClient(socket);
  const daemon = new Daemon({
    node,
    rest,
    kruise,
    cri,
    secretNamespace: DEFAULT_DAEMON_CONFIG_NAMESPACE,
    maxWorkers: 5,
    imageFsHighWatermark: 100,
    hostRoot: '/',
    statusIntervalMs: 1000,
    pullBackoffBaseMs: 200,
    ...over,
  });
  daemon.start();
  return {
    daemon,
    cri,
    stop: async () => {
      await daemon.stop();
      cri.close();
    },
  };
}

/** The built daemon as a process, for kill and restart tests; without `socket` it looks for the runtime itself (--host-root in `extra`). */
export function spawnDaemon(node: string, kubeconfig: string, socket: string | undefined, extra: string[] = []): ChildProcess & { output: () => string } {
  const child = spawn(
    process.execPath,
    [join(root, 'dist', 'daemon', 'main.js'), '--node-name', node, '--kubeconfig', kubeconfig, ...(socket !== undefined ? ['--runtime-endpoint', `unix://${socket}`] : []), '--addr', '127.0.0.1:0', '--status-write-interval-seconds', '1', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return Object.assign(child, { output: () => out });
}

export function nodeImages(rest: RestClient): Resource<NodeImage> {
  return new Resource<NodeImage>(rest, kruise.nodeImages);
}

export function tagStatus(ni: NodeImage | undefined, image: string, tag: string): ImageTagStatus | undefined {
  return ni?.status?.imageStatuses?.[image]?.tags.find((t) => t.tag === tag);
}
