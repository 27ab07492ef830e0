// The names of what kruise-ts installs and creates. Every one carries the kruise-ts prefix, so none
// is a name OpenKruise's chart (v1.8, v1.9) creates: kruise-ts runs beside OpenKruise without ever
// touching its namespaces, Services, Secrets, webhook configurations, RBAC or leases. The four CRDs
// are the only objects both projects install (test/unit/openkruise-names.test.ts holds the two
// lists side by side).

/** Namespace of the manager, the daemons, the webhook Service and certificates, the lease. */
export const DEFAULT_KRUISE_NAMESPACE = 'kruise-ts-system';
export const ENV_KRUISE_NAMESPACE = 'POD_NAMESPACE';
/** Pull secrets the daemons may read; the manager copies ImagePullJob secrets here. */
export const DEFAULT_DAEMON_CONFIG_NAMESPACE = 'kruise-ts-daemon-config';
export const ENV_DAEMON_CONFIG_NAMESPACE = 'KRUISE_DAEMON_CONFIG_NS';

export const DEFAULT_MANAGER_DEPLOYMENT = 'kruise-ts-manager';
export const DEFAULT_WEBHOOK_SERVICE = 'kruise-ts-webhook';
/** Where an OpenKruise beside kruise-ts is installed (its chart's installation.namespace). */
export const DEFAULT_OPENKRUISE_NAMESPACE = 'kruise-system';
export const DEFAULT_WEBHOOK_CERT_SECRET = 'kruise-ts-webhook-certs';
export const MUTATING_WEBHOOK_CONFIGURATION = 'kruise-ts-mutating-webhook-configuration';
export const VALIDATING_WEBHOOK_CONFIGURATION = 'kruise-ts-validating-webhook-configuration';
/** The manager's Lease (upstream's is kruise-manager). */
export const DEFAULT_LEADER_ELECTION_ID = 'kruise-ts-manager';
/** Suffix of the admission webhooks' names, which show in the API server's denials. */
export const WEBHOOK_NAME_SUFFIX = 'kruise-ts.io';

/** User agents: the API server records them as the field managers of what each binary writes. */
export const DAEMON_USER_AGENT = 'kruise-ts-daemon';
export const MANAGER_USER_AGENT = 'kruise-ts-manager';
