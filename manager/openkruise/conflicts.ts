// Whether OpenKruise, installed beside kruise-ts, still does the work kruise-ts does (its chart
// names, from openkruise/charts versions/kruise/1.9.x/templates). Pure: the caller reads the objects.
import type { KubeObject } from '../../api/types/common.js';

export const OPENKRUISE_DAEMONSET = 'kruise-daemon';
export const OPENKRUISE_MANAGER_DEPLOYMENT = 'kruise-controller-manager';
export const OPENKRUISE_WEBHOOK_CONFIGURATIONS = ['kruise-mutating-webhook-configuration', 'kruise-validating-webhook-configuration'] as const;

export interface DaemonSetView extends KubeObject {
  status?: { desiredNumberScheduled?: number };
}

export interface DeploymentView extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { containers?: Array<{ args?: string[]; command?: string[] }> } } };
}

export interface WebhookConfigurationView extends KubeObject {
  webhooks?: Array<{ name: string; rules?: Array<{ apiGroups?: string[]; resources?: string[] }> }>;
}

export interface Conflict {
  /** Whether kruise-ts's controllers stand back while it lasts (two writers of the same objects). */
  blocking: boolean;
  message: string;
}

const DAEMON_KINDS = new Set(['nodeimages', 'imagepulljobs', 'imagelistpulljobs', 'containerrecreaterequests']);

/** The --feature-gates value of the manager's containers, '' when none is given. */
function featureGates(d: DeploymentView): string {
  for (const c of d.spec?.template?.spec?.containers ?? []) {
    for (const a of [...(c.command ?? []), ...(c.args ?? [])]) if (a.startsWith('--feature-gates=')) return a.slice('--feature-gates='.length);
  }
  return '';
}

/**
 * What of OpenKruise's runs against kruise-ts: its daemon on any node (two pullers and CRR
 * executors per node, two writers of each NodeImage status), its manager with KruiseDaemon on
 * (KruiseDaemon is on unless switched off; with it, its NodeImage, ImagePullJob, ImageListPullJob
 * and ContainerRecreateRequest controllers run), and its webhooks for those kinds (which refuse
 * them with KruiseDaemon off, or change them with it on).
 */
export function openKruiseConflicts(o: {
  namespace: string;
  daemonSet: DaemonSetView | undefined;
  manager: DeploymentView | undefined;
  webhookConfigurations: readonly WebhookConfigurationView[];
}): Conflict[] {
  const out: Conflict[] = [];
  const nodes = o.daemonSet?.status?.desiredNumberScheduled ?? 0;
  if (o.daemonSet !== undefined && nodes > 0) {
    out.push({
      blocking: true,
      message: `OpenKruise's DaemonSet ${o.namespace}/${OPENKRUISE_DAEMONSET} runs on ${nodes} node(s): two daemons would pull and recreate containers for the same objects; install OpenKruise with deploy/openkruise/values.yaml (KruiseDaemon=false)`,
    });
  }
  if (o.manager !== undefined && (o.manager.spec?.replicas ?? 1) > 0 && !/(^|,)KruiseDaemon=false(,|$)/.test(featureGates(o.manager))) {
    out.push({
      blocking: true,
      message: `OpenKruise's ${o.namespace}/${OPENKRUISE_MANAGER_DEPLOYMENT} runs its NodeImage, ImagePullJob, ImageListPullJob and ContainerRecreateRequest controllers (feature gate KruiseDaemon is on): install OpenKruise with deploy/openkruise/values.yaml (KruiseDaemon=false)`,
    });
  }
  for (const c of o.webhookConfigurations) {
    const hooks = (c.webhooks ?? []).filter((w) => (w.rules ?? []).some((r) => (r.apiGroups ?? []).includes('apps.kruise.io') && (r.resources ?? []).some((x) => DAEMON_KINDS.has(x.split('/')[0] ?? ''))));
    if (hooks.length > 0) {
      out.push({
        blocking: false,
        message: `OpenKruise's ${c.metadata?.name ?? ''} still has ${hooks.map((h) => h.name).join(', ')}, which refuse or change these kinds: run deploy/openkruise/handover.sh`,
      });
    }
  }
  return out;
}
