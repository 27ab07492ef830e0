import { NEVER_NODE_IMAGE_TTL_SECONDS, NODE_IMAGE_CREATION_DELAY_SECONDS } from '../api/limits.js';
import {
  DEFAULT_DAEMON_CONFIG_NAMESPACE,
  DEFAULT_KRUISE_NAMESPACE,
  DEFAULT_LEADER_ELECTION_ID,
  DEFAULT_OPENKRUISE_NAMESPACE,
  DEFAULT_WEBHOOK_CERT_SECRET,
  DEFAULT_WEBHOOK_SERVICE,
  ENV_DAEMON_CONFIG_NAMESPACE,
  ENV_KRUISE_NAMESPACE,
} from '../api/installation.js';
import { isLogLevel } from '../kube/log.js';
import { bool, num, str } from '../kube/flags.js';

const atLeast = (min: number) => (v: number) => (v >= min ? undefined : `must be at least ${min}`);

export const managerFlags = {
  kubeconfig: str('kubeconfig', '', 'path to a kubeconfig; empty: $KUBECONFIG, then the in-cluster service account', 'KUBECONFIG_PATH'),
  namespace: str('namespace', DEFAULT_KRUISE_NAMESPACE, 'namespace kruise-ts runs in (leases, webhook Service and certificates)', ENV_KRUISE_NAMESPACE),
  daemonConfigNamespace: str('daemon-config-namespace', DEFAULT_DAEMON_CONFIG_NAMESPACE, 'namespace the daemons read pull secrets from; job secrets are copied there', ENV_DAEMON_CONFIG_NAMESPACE),
  metricsAddr: str('metrics-addr', ':8080', 'listen address of /metrics', 'METRICS_ADDR'),
  healthAddr: str('health-probe-addr', ':8000', 'listen address of /healthz and /readyz', 'HEALTH_PROBE_ADDR'),
  webhookPort: num('webhook-port', 9876, 'HTTPS port of the admission webhook', 'WEBHOOK_PORT', atLeast(1)),
  webhookHost: str('webhook-host', '', 'address the webhook listens on (empty: all)', 'WEBHOOK_HOST'),
  webhookService: str('webhook-service-name', DEFAULT_WEBHOOK_SERVICE, 'Service the API server reaches the webhook through', 'WEBHOOK_SERVICE_NAME'),
  webhookUrl: str('webhook-url', '', 'reach the webhook at this https URL instead of the Service (a manager outside the cluster)', 'WEBHOOK_URL'),
  webhookCertSecret: str('webhook-cert-secret', DEFAULT_WEBHOOK_CERT_SECRET, 'Secret (in --namespace) holding the webhook CA and serving certificate, shared by the replicas', 'WEBHOOK_CERT_SECRET'),
  daemonOwnNodeWebhook: bool(
    'daemon-own-node-webhook',
    false,
    "check in the webhook that a daemon writes only its own node's NodeImage and CRR status (clusters before 1.30; deploy/ turns it on, deploy/policy does the same from 1.30)",
    'DAEMON_OWN_NODE_WEBHOOK',
  ),
  leaderElection: bool('enable-leader-election', true, 'run controllers only in the replica holding the lease', 'ENABLE_LEADER_ELECTION'),
  leaderElectionNamespace: str('leader-election-namespace', '', 'namespace of the lease (empty: --namespace)', 'LEADER_ELECTION_NAMESPACE'),
  leaderElectionId: str('leader-election-id', DEFAULT_LEADER_ELECTION_ID, 'name of the lease', 'LEADER_ELECTION_ID'),
  nodeImageWorkers: num('nodeimage-workers', 3, 'NodeImage reconciles running at once', 'NODEIMAGE_WORKERS', atLeast(1)),
  imagePullJobWorkers: num('imagepulljob-workers', 3, 'ImagePullJob and ImageListPullJob reconciles running at once', 'IMAGEPULLJOB_WORKERS', atLeast(1)),
  crrWorkers: num('crr-workers', 3, 'ContainerRecreateRequest reconciles running at once', 'CRR_WORKERS', atLeast(1)),
  nodeImageCreationDelay: num('nodeimage-creation-delay-seconds', NODE_IMAGE_CREATION_DELAY_SECONDS, 'a Node must be Ready this long before its NodeImage is created', 'NODEIMAGE_CREATION_DELAY_SECONDS', atLeast(0)),
  openkruiseNamespace: str(
    'openkruise-namespace',
    DEFAULT_OPENKRUISE_NAMESPACE,
    "namespace of an OpenKruise installed beside kruise-ts; while its daemon or its controllers for these kinds run, kruise-ts's controllers stand back",
    'OPENKRUISE_NAMESPACE',
  ),
  neverRepullSeconds: num(
    'never-repull-interval-seconds',
    NEVER_NODE_IMAGE_TTL_SECONDS,
    'a completionPolicy Never job pulls its image again this often (its finished tag expires, give or take a tenth, at most 10 min), and on nodes that join',
    'NEVER_REPULL_INTERVAL_SECONDS',
    atLeast(10),
  ),
  jobProgressIntervalSeconds: num(
    'job-progress-interval-seconds',
    10,
    "an ImagePullJob's status message is rewritten for its nodes' byte progress at most this often; 0: only when a node finishes or something else changes",
    'JOB_PROGRESS_INTERVAL_SECONDS',
    atLeast(0),
  ),
  clonesetPredownload: bool('enable-cloneset-predownload', true, 'pre-download new images during CloneSet and Advanced StatefulSet rollouts', 'ENABLE_CLONESET_PREDOWNLOAD'),
  qps: num('rest-config-qps', 30, 'Kubernetes API requests per second (client-side limit)', 'REST_CONFIG_QPS', atLeast(0)),
  burst: num('rest-config-burst', 50, 'Kubernetes API request burst', 'REST_CONFIG_BURST', atLeast(1)),
  logLevel: str('log-level', 'info', 'error, warn, info or debug', 'LOG_LEVEL', (v) => (isLogLevel(v) ? undefined : 'must be error, warn, info or debug')),
};
