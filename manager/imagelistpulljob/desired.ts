// The child ImagePullJobs an ImageListPullJob should have (upstream pkg/controller/imagelistpulljob/imagelistpulljob_controller.go): one per image, made from
// the list's template; a child made from an older template is replaced. Pure.
import { createHash } from 'node:crypto';
import { KIND_IMAGE_LIST_PULL_JOB } from '../../api/group-version.js';
import { LABEL_CONTROLLER_REVISION_HASH } from '../../api/metadata-keys.js';
import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob, ImagePullJobTemplate } from '../../api/types/imagepulljob.js';
import { isDeleting } from '../../api/object-meta.js';

export function templateOf(list: ImageListPullJob): ImagePullJobTemplate {
  const { images: _images, ...template } = list.spec;
  return template;
}

/** JSON with sorted keys and without null or absent fields: equal templates hash equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined && x !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonical(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** FNV-32a of the template, spelled like Kubernetes' rand.SafeEncodeString (no vowels, no look-alikes). */
export function templateHash(template: ImagePullJobTemplate): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(canonical(template), 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return [...String(h)].map((c) => SAFE_ALPHABET[c.charCodeAt(0) % SAFE_ALPHABET.length] ?? '').join('');
}

/**
 * The child's name: the list's name and a digest of image and template. The same on every replica
 * and after every restart, so a create that was cut short is never repeated as a duplicate
 * (upstream uses generateName and expectations kept in memory).
 */
export function childName(list: ImageListPullJob, image: string, hash: string): string {
  const digest = createHash('sha256').update(`${image}\u0000${hash}`).digest('hex').slice(0, 10);
  return `${(list.metadata?.name ?? '').slice(0, 253 - 11).replace(/[.-]+$/, '')}-${digest}`;
}

export function newChild(list: ImageListPullJob, image: string, hash: string, listApiVersion: string): ImagePullJob {
  return {
    metadata: {
      name: childName(list, image, hash),
      namespace: list.metadata?.namespace ?? '',
      labels: { [LABEL_CONTROLLER_REVISION_HASH]: hash },
      ownerReferences: [
        {
          apiVersion: listApiVersion,
          kind: KIND_IMAGE_LIST_PULL_JOB,
          name: list.metadata?.name ?? '',
          uid: list.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { image, ...structuredClone(templateOf(list)) },
  };
}

export interface ChildPlan {
  hash: string;
  /** The child serving each image, where one exists for the current template. */
  current: Map<string, ImagePullJob>;
  create: ImagePullJob[];
  delete: ImagePullJob[];
}

/** What to create and delete so that each image has exactly one child of the current template. */
export function planChildren(list: ImageListPullJob, children: readonly ImagePullJob[], listApiVersion: string): ChildPlan {
  const hash = templateHash(templateOf(list));
  const images = [...new Set(list.spec.images ?? [])];
  const wanted = new Set(images);
  const current = new Map<string, ImagePullJob>();
  const del: ImagePullJob[] = [];
  const live = children.filter((c) => !isDeleting(c));
  for (const image of images) {
    const fits = live.filter((c) => c.spec.image === image && c.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] === hash);
    const keep = fits.find((c) => c.metadata?.name === childName(list, image, hash)) ?? fits[0];
    if (keep) current.set(image, keep);
  }
  const kept = new Set([...current.values()]);
  for (const c of live) if (!kept.has(c)) del.push(c);
  const create = images.filter((image) => wanted.has(image) && !current.has(image)).map((image) => newChild(list, image, hash, listApiVersion));
  return { hash, current, create, delete: del };
}
