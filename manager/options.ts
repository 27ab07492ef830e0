import { isLogLevel } from '../kube/log.js';
import { str } from '../kube/flags.js';

export const managerFlags = {
  kubeconfig: str('kubeconfig', '', 'path to a kubeconfig; empty: $KUBECONFIG, then the in-cluster service account', 'KUBECONFIG_PATH'),
  logLevel: str('log-level', 'info', 'error, warn, info or debug', 'LOG_LEVEL', (v) => (isLogLevel(v) ? undefined : 'must be error, warn, info or debug')),
};
