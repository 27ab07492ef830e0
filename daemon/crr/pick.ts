// Which CRR of a pod runs: one at a time, the one already under way first, then the oldest.
import { crrCreatedMs, isCrrCompleted } from '../../api/crr-status.js';
import { CRR_PHASE_COMPLETED, CRR_PHASE_PENDING, CRR_PHASE_RECREATING } from '../../api/enums.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';

export interface Pick {
  /** The CRR to work on now. */
  current?: ContainerRecreateRequest | undefined;
  /** CRRs that must wait their turn and do not say so yet (no phase): they become Pending. */
  toPending: ContainerRecreateRequest[];
}

const weight = (crr: ContainerRecreateRequest): number => {
  switch (crr.status?.phase) {
    case CRR_PHASE_COMPLETED:
      return 1;
    case CRR_PHASE_RECREATING:
      return 2;
    case CRR_PHASE_PENDING:
      return 3;
    default:
      return 4;
  }
};

export function pickCrr(crrs: readonly ContainerRecreateRequest[]): Pick {
  const eligible = crrs
    .filter((c) => c.metadata?.deletionTimestamp === undefined && !isCrrCompleted(c))
    .sort((a, b) => weight(a) - weight(b) || crrCreatedMs(a) - crrCreatedMs(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const [current, ...rest] = eligible;
  return { current, toPending: rest.filter((c) => c.status?.phase === undefined) };
}
