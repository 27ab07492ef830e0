// When the daemon looks at the runtime for a CRR. A plan made after a look that says "wait" holds
// for that version of the CRR until its timer: a reconcile of the same version before then (the echo
// of the daemon's own status write, another CRR of the pod changing) would look for nothing.
import type { Plan } from './step.js';

export class RuntimeLooks {
  private readonly waits = new Map<string, { resourceVersion: string; untilMs: number }>();

  /** How long the wait planned on this version of the CRR still runs, or undefined: look now. */
  pendingMs(key: string, resourceVersion: string, nowMs: number): number | undefined {
    const w = this.waits.get(key);
    if (w === undefined || w.resourceVersion !== resourceVersion || nowMs >= w.untilMs) return undefined;
    return w.untilMs - nowMs;
  }

  /** Records the plan made from a look; only a wait with a timer holds off the next look. */
  planned(key: string, resourceVersion: string, plan: Plan, nowMs: number): void {
    if (plan.type === 'wait' && plan.requeueAfterMs !== undefined) this.waits.set(key, { resourceVersion, untilMs: nowMs + plan.requeueAfterMs });
    else this.waits.delete(key);
  }

  forget(key: string): void {
    this.waits.delete(key);
  }
}
