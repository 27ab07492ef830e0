import { jsonEqual } from '../../api/json-equal.js';
import type { NodeImage, NodeImageStatus } from '../../api/types/nodeimage.js';
import type { Informer } from '../../kube/informer.js';
import { componentLogger, errorFields, type Logger } from '../../kube/log.js';
import type { Resource } from '../../kube/resource.js';
import { updateWithRetry } from '../../kube/write.js';

export interface StatusWriterOptions {
  /** Progress-only changes are written at most this often, and a pull's start within this long of it. */
  minIntervalMs?: number | undefined;
  /** Whether pulls are still running. */
  busy?: () => boolean;
  logger?: Logger;
  onWrite?: (result: 'written' | 'skipped' | 'error') => void;
}

/** Results wait at most this long while other pulls still run, so a burst of them becomes one write. */
const BUSY_DELAY_MS = 1000;

/**
 * What changed in the status: a result (a tag finished or was dropped, the disk filled or freed), a
 * pull that started (its tag Waiting, then Pulling), or progress.
 */
export type StatusChange = 'result' | 'started' | 'progress';

/**
 * When a change should be written (epoch ms). A started pull is reported within the progress
 * interval of its start, not at once: a pull that ends sooner is written once, with its result,
 * instead of twice (upstream's daemon writes Pulling at once, imagepuller_worker.go; that record
 * only has to beat the manager's 10-minute "node has not responded"). Due within 1 s, as before, it
 * raced a 1 s pull: 1.18–1.73 status writes per tag in the scale simulation. Pure.
 */
export function writeDueMs(change: StatusChange, nowMs: number, lastWriteMs: number, minIntervalMs: number, busy: boolean): number {
  switch (change) {
    case 'result':
      return nowMs + (busy ? BUSY_DELAY_MS : 0);
    case 'started':
      return nowMs + minIntervalMs;
    case 'progress':
      return Math.max(nowMs, lastWriteMs + minIntervalMs);
  }
}

/**
 * Writes the node's NodeImage status through the status subresource, coalescing changes (when each
 * goes out: writeDueMs); nothing is written when the server already holds the same status; conflicts
 * re-read and rebuild from the fresh spec; failed writes retry with backoff and are never dropped.
 */
export class StatusWriter {
  /** The earliest moment a pending change asked to be written by; Infinity: nothing pending. */
  private dueBy = Infinity;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private writing: Promise<void> | undefined;
  private lastWrite = 0;
  private failures = 0;
  private stopped = false;
  /** No write before this moment (another daemon writes this status: see ImagePuller). */
  private heldUntil = 0;
  /** Our last write and the version it replaced, until the watch brings it back. */
  private written: { obj: NodeImage; replaced: string | undefined } | undefined;
  private readonly log: Logger;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly nodeImages: Resource<NodeImage>,
    private readonly informer: Informer<NodeImage>,
    private readonly node: string,
    private readonly build: (ni: NodeImage) => NodeImageStatus,
    private readonly opts: StatusWriterOptions = {},
  ) {
    this.log = opts.logger ?? componentLogger('imagepuller-status');
    // Writes that failed during an API server outage go out once it answers again, not at the end
    // of a backoff that grew while it was away.
    this.unsubscribe = nodeImages.rest.onServerBack(() => {
      if (this.failures === 0 || this.stopped) return;
      this.failures = 0;
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      if (this.pending) this.schedule();
    });
  }

  private get pending(): boolean {
    return this.dueBy !== Infinity;
  }

  markDirty(change: StatusChange): void {
    if (this.stopped) return;
    this.dueBy = Math.min(this.dueBy, writeDueMs(change, Date.now(), this.lastWrite, this.opts.minIntervalMs ?? 5000, this.opts.busy?.() ?? false));
    this.schedule();
  }

  /** Writes whatever is pending now (shutdown). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.writing;
    if (this.pending) await this.write();
  }

  /** Holds every write back until `ms` (epoch); pending changes go out then. */
  holdUntil(ms: number): void {
    this.heldUntil = Math.max(this.heldUntil, ms);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.pending) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.writing) return;
    const backoff = this.failures > 0 ? this.nodeImages.rest.retryDelayMs(Math.min(30_000, 1000 * 2 ** (this.failures - 1))) : 0;
    const due = Math.max(this.dueBy, Date.now() + backoff, this.heldUntil);
    // A result arriving while only progress was due must not wait for the progress interval.
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.write();
    }, due - Date.now());
  }

  private async write(): Promise<void> {
    if (this.writing) return this.writing;
    this.dueBy = Infinity;
    this.writing = this.doWrite().finally(() => {
      this.writing = undefined;
      if (this.pending && !this.stopped) this.schedule();
    });
    return this.writing;
  }

  private async doWrite(): Promise<void> {
    const cached = this.informer.get(this.node);
    if (!cached) return;
    // Right after a write the cache may still hold the version it replaced: building on that would
    // cost a conflict, a GET and a second PUT, so the write builds on what the server answered.
    const base = this.written && cached.metadata?.resourceVersion === this.written.replaced ? this.written.obj : cached;
    if (jsonEqual(this.build(base), base.status)) {
      this.opts.onWrite?.('skipped');
      return;
    }
    try {
      let replaced: string | undefined;
      const result = await updateWithRetry(
        this.nodeImages,
        undefined,
        this.node,
        (fresh) => {
          replaced = fresh.metadata?.resourceVersion;
          const status = this.build(fresh);
          return jsonEqual(status, fresh.status) ? undefined : { ...fresh, status };
        },
        { status: true, initial: base },
      );
      this.written = result ? { obj: result, replaced } : undefined;
      this.lastWrite = Date.now();
      this.failures = 0;
      this.opts.onWrite?.('written');
    } catch (err) {
      this.failures++;
      // What failed goes out again at the end of the backoff, not at its own interval once more.
      this.dueBy = Date.now();
      this.opts.onWrite?.('error');
      this.log.warn('cannot write NodeImage status, will retry', { nodeImage: this.node, attempt: this.failures, ...errorFields(err) });
    }
  }
}
