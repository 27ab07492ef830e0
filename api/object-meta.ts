import type { KubeObject } from './types/common.js';

/** Whether the object has a deletionTimestamp: it goes once its finalizers are gone. */
export function isDeleting(o: KubeObject | undefined): boolean {
  return o?.metadata?.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;
}
