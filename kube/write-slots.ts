export type Slot = <T>(write: () => Promise<T>) => Promise<T>;

type Waiter = () => void;

/**
 * API writes a controller keeps in flight, all reconciles together. A reconcile alone uses every
 * slot (one job's fan-out to thousands of NodeImages goes as fast as the plain client bench:scale
 * holds it against); while several wait, a freed slot goes to them in turn, so a reconcile that
 * fans out interleaves with the others instead of making them wait for its whole queue.
 */
export class WriteSlots {
  private running = 0;
  /** Reconciles with writes waiting, in the order they get the next slots. */
  private readonly turns: Waiter[][] = [];

  constructor(private readonly total: number) {}

  /** A limiter for one reconcile's writes. */
  forReconcile(): Slot {
    const queue: Waiter[] = [];
    return async (write) => {
      await this.acquire(queue);
      try {
        return await write();
      } finally {
        this.release();
      }
    };
  }

  private acquire(queue: Waiter[]): Promise<void> {
    if (this.running < this.total && this.turns.length === 0) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      queue.push(resolve);
      if (queue.length === 1) this.turns.push(queue);
    });
  }

  private release(): void {
    const queue = this.turns.shift();
    const next = queue?.shift();
    if (queue === undefined || next === undefined) {
      this.running--;
      return;
    }
    // The slot passes straight on; this reconcile goes to the back of the turns if it has more.
    if (queue.length > 0) this.turns.push(queue);
    next();
  }
}
