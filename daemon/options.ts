import { isAbsolute, join } from 'node:path';
import { DEFAULT_DAEMON_CONFIG_NAMESPACE, ENV_DAEMON_CONFIG_NAMESPACE } from '../api/installation.js';
import { isLogLevel } from '../kube/log.js';
import { num, str } from '../kube/flags.js';

const atLeast = (min: number) => (v: number) => (v >= min ? undefined : `must be at least ${min}`);

export const daemonFlags = {
  kubeconfig: str('kubeconfig', '', 'path to a kubeconfig; empty: $KUBECONFIG, then the in-cluster service account', 'KUBECONFIG_PATH'),
  nodeName: str('node-name', '', 'name of the node this daemon serves (required)', 'NODE_NAME'),
  runtimeEndpoint: str('runtime-endpoint', '', 'CRI socket, unix:///path or /path; empty: auto-detect containerd, k3s, CRI-O, cri-dockerd', 'RUNTIME_ENDPOINT'),
  socketFile: str('socket-file', '', 'upstream-compatible alias: a socket path, or a name under <host-root>/var/run', 'SOCKET_FILE'),
  hostRoot: str('host-root', '/', 'where the host filesystem (its /run and /var/run) is mounted, for socket auto-detection and the disk guard', 'HOST_ROOT'),
  registryConfigPath: str('registry-config-path', '/etc/containerd/certs.d:/etc/docker/certs.d', "containerd's registry host folders (its config_path, colon-separated, host paths under --host-root): byte progress reads manifests through the same mirrors and CAs", 'REGISTRY_CONFIG_PATH'),
  addr: str('addr', ':10221', 'listen address of /healthz, /readyz and /metrics', 'DAEMON_ADDR'),
  maxWorkers: num('max-workers-for-pull-image', 5, 'image pulls running at once on this node', 'MAX_WORKERS_FOR_PULL_IMAGE', atLeast(1)),
  maxWorkersForCrr: num('max-workers-for-crr', 32, 'pods whose ContainerRecreateRequests are executed at once on this node', 'MAX_WORKERS_FOR_CRR', atLeast(1)),
  imageFsHighWatermark: num('image-fs-high-watermark', 90, 'refuse to pull while the image filesystem is fuller than this percent (100 turns the guard off)', 'IMAGE_FS_HIGH_WATERMARK', (v) =>
    v > 0 && v <= 100 ? undefined : 'must be in (0, 100]',
  ),
  secretNamespace: str('secret-namespace', DEFAULT_DAEMON_CONFIG_NAMESPACE, 'the only namespace pull secrets are read from', ENV_DAEMON_CONFIG_NAMESPACE),
  statusInterval: num('status-write-interval-seconds', 5, 'progress is written to NodeImage status at most this often, a pull\'s start within this long of it (results at once)', 'STATUS_WRITE_INTERVAL_SECONDS', atLeast(0)),
  qps: num('rest-config-qps', 5, 'Kubernetes API requests per second (client-side limit)', 'REST_CONFIG_QPS', atLeast(0)),
  burst: num('rest-config-burst', 10, 'Kubernetes API request burst', 'REST_CONFIG_BURST', atLeast(1)),
  logLevel: str('log-level', 'info', 'error, warn, info or debug', 'LOG_LEVEL', (v) => (isLogLevel(v) ? undefined : 'must be error, warn, info or debug')),
};

/** --runtime-endpoint wins; --socket-file is upstream's spelling of the same thing. */
export function explicitEndpoint(runtimeEndpoint: string, socketFile: string, hostRoot: string): string | undefined {
  if (runtimeEndpoint !== '') return runtimeEndpoint;
  if (socketFile === '') return undefined;
  if (socketFile.startsWith('unix:') || isAbsolute(socketFile)) return socketFile;
  return join(hostRoot, 'var', 'run', socketFile);
}
