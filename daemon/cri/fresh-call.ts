/**
 * One read shared by every caller that asked before it began. A caller always gets an answer from a
 * call that started after it asked, so it is as fresh as a call of its own; callers asking while a
 * call is in flight wait for it to end and share the one that follows. N callers at once cost at
 * most two calls instead of N.
 */
export class FreshCall<T> {
  private running: Promise<T> | undefined;
  private queued: Promise<T> | undefined;

  constructor(private readonly call: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.running === undefined) return this.start();
    // The running call may have begun before this caller asked: its answer could be older than what
    // the caller has already seen (a CRR written after that call listed the containers).
    this.queued ??= this.running.then(settled, settled).then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<T> {
    const p = this.call();
    this.running = p;
    const done = (): void => {
      // With callers queued, the next call is about to take over; leaving this one as running
      // until then keeps a caller arriving in between from starting a third.
      if (this.running === p && this.queued === undefined) this.running = undefined;
    };
    p.then(done, done);
    return p;
  }
}

function settled(): void {}
