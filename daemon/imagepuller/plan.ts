import type { NodeImageSpec, NodeImageStatus } from '../../api/types/nodeimage.js';
import { isFinal, tagKey, type DesiredTag, type TagState } from './state.js';

export interface PullPlan {
  /** Tags that need a pull now. */
  start: DesiredTag[];
  /** Running pulls to stop: their tag left the spec, its version moved on, or another writer recorded its result. */
  cancel: string[];
  /** Results already recorded in the status for the current version: taken over, never pulled again. */
  adopt: TagState[];
  /** Every desired tag, in spec order. */
  desired: DesiredTag[];
}

export function desiredTags(spec: NodeImageSpec | undefined): DesiredTag[] {
  const out: DesiredTag[] = [];
  for (const [image, imageSpec] of Object.entries(spec?.images ?? {})) {
    for (const t of imageSpec.tags ?? []) {
      out.push({ key: tagKey(image, t.tag), image, tag: t.tag, version: t.version ?? 0, spec: t, imageSpec });
    }
  }
  return out;
}

/**
 * Decides, level-triggered, what the puller must do to make its node match the spec: pull unless
 * the status (or memory) already holds a result for the same tag and version; a higher version
 * pulls again; a removed tag stops its pull. `running` maps tag keys of pulls in flight to the
 * version they serve; `known` is what the daemon remembers.
 */
export function planPulls(
  spec: NodeImageSpec | undefined,
  status: NodeImageStatus | undefined,
  running: ReadonlyMap<string, number>,
  known: ReadonlyMap<string, TagState>,
): PullPlan {
  const desired = desiredTags(spec);
  const wanted = new Map(desired.map((d) => [d.key, d]));
  const plan: PullPlan = { start: [], cancel: [], adopt: [], desired };
  for (const [key, version] of running) {
    const d = wanted.get(key);
    if (!d || d.version !== version) plan.cancel.push(key);
  }
  for (const d of desired) {
    const mem = known.get(d.key);
    if (mem && mem.version === d.version && isFinal(mem.phase)) continue;
    const recorded = status?.imageStatuses?.[d.image]?.tags?.find((t) => t.tag === d.tag && (t.version ?? 0) === d.version);
    const isRunning = running.get(d.key) === d.version;
    // A final phase this daemon did not reach for the version it runs is another writer's verdict
    // (the manager's, at the tag's end): it stands, the pull stops, and the daemon never writes the
    // tag back to Waiting or Pulling.
    if (isRunning && !(recorded && isFinal(recorded.phase))) continue;
    if (isRunning) plan.cancel.push(d.key);
    if (recorded && isFinal(recorded.phase)) {
      plan.adopt.push({
        image: d.image,
        tag: d.tag,
        version: d.version,
        phase: recorded.phase,
        progress: recorded.progress ?? (recorded.phase === 'Succeeded' ? 100 : 0),
        ...(recorded.startTime ? { startTime: recorded.startTime } : {}),
        ...(recorded.completionTime ? { completionTime: recorded.completionTime } : {}),
        ...(recorded.imageID ? { imageID: recorded.imageID } : {}),
        ...(recorded.message ? { message: recorded.message } : {}),
      });
      continue;
    }
    plan.start.push(d);
  }
  return plan;
}
