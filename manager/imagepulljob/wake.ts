// Which ImagePullJobs a NodeImage change concerns. Upstream 1.8/1.9 woke every job of an image on
// any change of that image, so each status write of each daemon re-ran hundreds of jobs (upstream pkg/controller/imagepulljob/imagepulljob_event_handler.go before per-tag diffing,
// PR #2483); here a job wakes only when its own tag on that node changed in a way its status or its
// next write depends on: the tag's owners, version or policy, the phase or version of its status,
// or the image's secrets and sandbox config. Timestamps wake no one; byte progress wakes its owners
// later and coalesced (progressOwners), since it only moves a number in the job's message.
import { jsonEqual } from '../../api/json-equal.js';
import { MAX_IMAGES_PER_NODE_IMAGE } from '../../api/limits.js';
import type { ImageTagSpec, NodeImage } from '../../api/types/nodeimage.js';

function tagShape(spec: ImageTagSpec | undefined, phase: string | undefined, statusVersion: number | undefined): string {
  if (!spec && phase === undefined) return '';
  return JSON.stringify([
    spec?.version ?? null,
    (spec?.ownerReferences ?? []).map((o) => o.uid ?? ''),
    spec?.pullPolicy ?? null,
    spec?.imagePullPolicy ?? null,
    phase ?? null,
    statusVersion ?? null,
  ]);
}

function ownerKeys(spec: ImageTagSpec | undefined, into: Set<string>): void {
  for (const o of spec?.ownerReferences ?? []) if (o.namespace && o.name) into.add(`${o.namespace}/${o.name}`);
}

/** "namespace/name" of the jobs owning a tag of `a` or `b` whose state changed between them. */
export function ownersToWake(a: NodeImage, b: NodeImage): Set<string> {
  const out = new Set<string>();
  const names = new Set([...Object.keys(a.spec?.images ?? {}), ...Object.keys(b.spec?.images ?? {})]);
  for (const name of names) {
    const ia = a.spec?.images?.[name];
    const ib = b.spec?.images?.[name];
    const imageChanged = !ia || !ib || !jsonEqual(ia.pullSecrets, ib.pullSecrets) || !jsonEqual(ia.sandboxConfig, ib.sandboxConfig);
    const tags = new Set([...(ia?.tags ?? []).map((t) => t.tag), ...(ib?.tags ?? []).map((t) => t.tag)]);
    for (const tag of tags) {
      const ta = ia?.tags?.find((t) => t.tag === tag);
      const tb = ib?.tags?.find((t) => t.tag === tag);
      const sa = a.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag);
      const sb = b.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === tag);
      if (!imageChanged && tagShape(ta, sa?.phase, sa?.version) === tagShape(tb, sb?.phase, sb?.version)) continue;
      ownerKeys(ta, out);
      ownerKeys(tb, out);
    }
  }
  return out;
}

/** Whether the NodeImage went from full to having room, which unblocks jobs that could not add their image. */
export function gainedRoom(a: NodeImage, b: NodeImage): boolean {
  const count = (ni: NodeImage): number => Object.keys(ni.spec?.images ?? {}).length;
  return count(a) >= MAX_IMAGES_PER_NODE_IMAGE && count(b) < MAX_IMAGES_PER_NODE_IMAGE;
}

/** "namespace/name" of the jobs owning a tag whose byte progress alone changed between `a` and `b`. */
export function progressOwners(a: NodeImage, b: NodeImage): Set<string> {
  const out = new Set<string>();
  for (const [name, image] of Object.entries(b.status?.imageStatuses ?? {})) {
    for (const st of image.tags ?? []) {
      const before = a.status?.imageStatuses?.[name]?.tags?.find((t) => t.tag === st.tag);
      if ((before?.progress ?? 0) === (st.progress ?? 0)) continue;
      ownerKeys(b.spec?.images?.[name]?.tags?.find((t) => t.tag === st.tag), out);
    }
  }
  return out;
}
