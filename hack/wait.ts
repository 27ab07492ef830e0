import type { KubeObject } from '../api/types/common.js';
import { core, Resource } from '../kube/resource.js';
import type { RestClient } from '../kube/rest.js';

/** Polls `check` until it returns true (true) or the time is up (false); errors count as "not yet". */
export async function eventuallyTrue(check: () => Promise<boolean>, timeoutMs: number, everyMs = 500): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Waits for a namespace's default ServiceAccount and its token: the ServiceAccount admission plugin
 * refuses pods until the controller manager has made both, as in any cluster.
 */
export async function defaultServiceAccount(rest: RestClient, namespace: string, timeoutMs = 30_000): Promise<void> {
  const accounts = new Resource<KubeObject & { secrets?: unknown[] }>(rest, core.serviceaccounts);
  const ok = await eventuallyTrue(async () => ((await accounts.get(namespace, 'default')).secrets?.length ?? 0) > 0, timeoutMs, 100);
  if (!ok) throw new Error(`the default ServiceAccount of namespace ${namespace} has no token after ${timeoutMs} ms`);
}
