import { isAbsolute, join } from 'node:path';
import { isLogLevel } from '../kube/log.js';
import { str } from '../kube/flags.js';

export const daemonFlags = {
  kubeconfig: str('kubeconfig', '', 'path to a kubeconfig; empty: $KUBECONFIG, then the in-cluster service account', 'KUBECONFIG_PATH'),
  nodeName: str('node-name', '', 'name of the node this daemon serves (required)', 'NODE_NAME'),
  runtimeEndpoint: str('runtime-endpoint', '', 'CRI socket, unix:///path or /path; empty: auto-detect containerd, k3s, CRI-O, cri-dockerd', 'RUNTIME_ENDPOINT'),
  socketFile: str('socket-file', '', 'upstream-compatible alias: a socket path, or a name under <host-root>/var/run', 'SOCKET_FILE'),
  hostRoot: str('host-root', '/', 'where the host filesystem (its /run and /var/run) is mounted, for socket auto-detection', 'HOST_ROOT'),
  logLevel: str('log-level', 'info', 'error, warn, info or debug', 'LOG_LEVEL', (v) => (isLogLevel(v) ? undefined : 'must be error, warn, info or debug')),
};

/** --runtime-endpoint wins; --socket-file is upstream's spelling of the same thing. */
export function explicitEndpoint(runtimeEndpoint: string, socketFile: string, hostRoot: string): string | undefined {
  if (runtimeEndpoint !== '') return runtimeEndpoint;
  if (socketFile === '') return undefined;
  if (socketFile.startsWith('unix:') || isAbsolute(socketFile)) return socketFile;
  return join(hostRoot, 'var', 'run', socketFile);
}
