// Who else writes this node's NodeImage status: the API server records every writer in
// metadata.managedFields, named after its user agent (kruise-ts's binaries call themselves
// kruise-ts-daemon and kruise-ts-manager; OpenKruise's daemon calls itself kruise-daemon). Pure.
import type { NodeImage } from '../../api/types/nodeimage.js';

const OURS = /^kruise-ts/;

/** Each writer other than kruise-ts that owns status fields, with when it last wrote. */
export function foreignStatusWriters(ni: NodeImage): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of ni.metadata?.managedFields ?? []) {
    const manager = m.manager ?? '';
    const fields = m.fieldsV1 as Record<string, unknown> | undefined;
    if (manager === '' || OURS.test(manager) || fields?.['f:status'] === undefined) continue;
    const time = m.time ?? '';
    if ((out.get(manager) ?? '') < time) out.set(manager, time);
  }
  return out;
}

/**
 * The writers that wrote since `seen` (what they had written when last looked at): a status
 * written before this daemon started (OpenKruise's daemon before the take-over) is no conflict,
 * another write while it runs is.
 */
export function newWrites(seen: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): string[] {
  return [...now].filter(([manager, time]) => time > (seen.get(manager) ?? '')).map(([manager]) => manager);
}
