import { EVENT_TYPE_WARNING, REASON_OPENKRUISE_CONFLICT } from '../../api/events.js';
import type { EventRecorder, EventTarget } from '../../kube/events.js';
import { errorFields, type Logger } from '../../kube/log.js';
import { ApiError, type RestClient } from '../../kube/rest.js';
import { core, Resource, type ResourceType } from '../../kube/resource.js';
import {
  OPENKRUISE_DAEMONSET,
  OPENKRUISE_MANAGER_DEPLOYMENT,
  OPENKRUISE_WEBHOOK_CONFIGURATIONS,
  openKruiseConflicts,
  type Conflict,
  type DaemonSetView,
  type DeploymentView,
  type WebhookConfigurationView,
} from './conflicts.js';

const POLL_MS = 30_000;

const apps = (plural: string, kind: string): ResourceType => ({ group: 'apps', version: 'v1', plural, kind, namespaced: true });

async function getOrUndefined<T extends object>(res: Resource<T & { metadata?: object }>, namespace: string | undefined, name: string): Promise<T | undefined> {
  try {
    return await res.get(namespace, name);
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return undefined;
    throw err;
  }
}

/**
 * Reads OpenKruise's objects by name every 30 s (a handful of GETs; no watch for what rarely
 * changes) and keeps the conflicts they show: a log line and a Warning event when they change,
 * the text for /readyz, and the gate the leader's controllers wait behind while two writers would
 * race (README: "Running with OpenKruise").
 */
export class OpenKruiseWatch {
  private conflicts: Conflict[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly daemonSets: Resource<DaemonSetView>;
  private readonly deployments: Resource<DeploymentView>;
  private readonly configurations: Array<Resource<WebhookConfigurationView>>;

  constructor(
    rest: RestClient,
    private readonly namespace: string,
    private readonly recorder: EventRecorder,
    private readonly target: EventTarget,
    private readonly log: Logger,
  ) {
    this.daemonSets = new Resource(rest, apps('daemonsets', 'DaemonSet'));
    this.deployments = new Resource(rest, apps('deployments', 'Deployment'));
    this.configurations = [
      new Resource(rest, core.mutatingwebhookconfigurations),
      new Resource(rest, core.validatingwebhookconfigurations),
    ];
  }

  /** Reads once now (before the caller goes on), then every POLL_MS until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    await this.poll();
    const timer = setInterval(() => void this.poll(), POLL_MS);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  /** What /readyz reports while OpenKruise does kruise-ts's work, or undefined. */
  problem(): string | undefined {
    return this.conflicts.length > 0 ? this.conflicts.map((c) => c.message).join('; ') : undefined;
  }

  blocking(): boolean {
    return this.conflicts.some((c) => c.blocking);
  }

  /** Resolves once `blocking()` equals `wanted` (at once if it does), or when `signal` aborts. */
  until(wanted: boolean, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.blocking() !== wanted && !signal.aborted) return;
        this.listeners.delete(check);
        signal.removeEventListener('abort', check);
        resolve();
      };
      this.listeners.add(check);
      signal.addEventListener('abort', check, { once: true });
      check();
    });
  }

  private async poll(): Promise<void> {
    let next: Conflict[];
    try {
      const [daemonSet, manager, ...configs] = await Promise.all([
        getOrUndefined(this.daemonSets, this.namespace, OPENKRUISE_DAEMONSET),
        getOrUndefined(this.deployments, this.namespace, OPENKRUISE_MANAGER_DEPLOYMENT),
        ...this.configurations.map((res, i) => getOrUndefined(res, undefined, OPENKRUISE_WEBHOOK_CONFIGURATIONS[i] ?? '')),
      ]);
      next = openKruiseConflicts({
        namespace: this.namespace,
        daemonSet: daemonSet as DaemonSetView | undefined,
        manager: manager as DeploymentView | undefined,
        webhookConfigurations: configs.filter((c): c is WebhookConfigurationView => c !== undefined),
      });
    } catch (err) {
      this.log.warn("cannot read OpenKruise's objects to check that it leaves kruise-ts's kinds alone", errorFields(err));
      return;
    }
    const before = new Set(this.conflicts.map((c) => c.message));
    const added = next.filter((c) => !before.has(c.message));
    const cleared = this.conflicts.length > 0 && next.length === 0;
    this.conflicts = next;
    for (const c of added) {
      this.log.warn(c.blocking ? 'OpenKruise does what kruise-ts does: controllers stand back' : 'OpenKruise gets in the way', { conflict: c.message });
      this.recorder.event(this.target, EVENT_TYPE_WARNING, REASON_OPENKRUISE_CONFLICT, c.message);
    }
    if (cleared) this.log.info('OpenKruise leaves kruise-ts\'s kinds alone again');
    if (added.length > 0 || cleared || before.size !== next.length) for (const l of [...this.listeners]) l();
  }
}
