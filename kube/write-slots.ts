import pLimit, { type LimitFunction } from 'p-limit';

export type Slot = <T>(write: () => Promise<T>) => Promise<T>;

/**
 * API writes a controller keeps in flight, all reconciles together, with each reconcile holding at
 * most `share` of them at once: a reconcile that fans out to thousands of objects then interleaves
 * with the others instead of making them wait for its whole queue (p-limit runs in arrival order).
 */
export class WriteSlots {
  private readonly slots: LimitFunction;

  constructor(
    total: number,
    private readonly share: number,
  ) {
    this.slots = pLimit(total);
  }

  /** A limiter for one reconcile's writes. */
  forReconcile(): Slot {
    const mine = pLimit(this.share);
    return (write) => mine(() => this.slots(write));
  }
}
