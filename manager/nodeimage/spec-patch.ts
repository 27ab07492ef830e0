// The manager's NodeImage spec writes as guarded JSON patches: the jobs' (placing and releasing
// tags) and the NodeImage controller's (dropping tags whose owners are gone or whose TTL passed).
// Each node's daemon writes its NodeImage status every few seconds while it pulls, and every status
// write moves the resourceVersion: a spec PUT built on the informer's copy met 409 Conflict (and
// cost a GET and a second PUT) for 41 % of the manager's writes with 50 jobs over 5,000 nodes
// (BENCHMARKS.md). Status writes leave metadata.generation alone (the CRD's status subresource), so
// a patch that tests the generation and the tag statuses the writers' decisions read is refused
// only when something they relied on moved.
import type { NodeImage } from '../../api/types/nodeimage.js';
import { jsonEqual } from '../../api/json-equal.js';
import { pointer, type JsonPatchOp } from '../../kube/json-patch.js';

/**
 * The patch that turns `current` into `next`, or undefined when a PUT must guard it: the change
 * is not to the spec alone, or the generation is unknown, or a tag whose spec entry changes has no
 * status yet while the spec already names it (its daemon may be reporting on it right now, and
 * whether a round finished decides what a joining job writes: applyJobTag, releaseJobTag). The
 * status of each changed tag is tested: the jobs' decisions and a TTL drop's completion time come
 * from it. A tag the spec does not name gets no status while the generation stays: daemons report
 * spec tags only.
 */
export function nodeImageSpecPatch(current: NodeImage, next: NodeImage): JsonPatchOp[] | undefined {
  const generation = current.metadata?.generation;
  if (generation === undefined) return undefined;
  const { spec: _a, ...restCurrent } = current;
  const { spec: _b, ...restNext } = next;
  if (!jsonEqual(restCurrent, restNext)) return undefined;
  const ops: JsonPatchOp[] = [{ op: 'test', path: pointer('metadata', 'generation'), value: generation }];
  const before = current.spec?.images ?? {};
  const after = next.spec?.images ?? {};
  for (const image of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const had = new Map((before[image]?.tags ?? []).map((t) => [t.tag, t]));
    const has = new Map((after[image]?.tags ?? []).map((t) => [t.tag, t]));
    const statuses = current.status?.imageStatuses?.[image]?.tags ?? [];
    for (const tag of new Set([...had.keys(), ...has.keys()])) {
      if (jsonEqual(had.get(tag), has.get(tag))) continue;
      const i = statuses.findIndex((s) => s.tag === tag);
      if (i >= 0) ops.push({ op: 'test', path: pointer('status', 'imageStatuses', image, 'tags', String(i)), value: statuses[i] });
      else if (had.has(tag)) return undefined;
    }
  }
  ops.push({ op: 'add', path: pointer('spec'), value: next.spec ?? {} });
  return ops;
}
