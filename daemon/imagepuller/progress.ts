import type { CriClient } from '../cri/client.js';
import type { LayerInfo } from './manifest.js';

export interface IngestView {
  offset: number;
  total: number;
}

/** containerd names layer ingests "layer-sha256:<hex>" (and other blobs "<kind>-sha256:<hex>"). */
export function ingestDigest(ref: string): string | undefined {
  const m = /(sha256:[a-f0-9]{64})$/.exec(ref);
  return m?.[1];
}

/**
 * Percent of an image's layer bytes that are on the node: layers already stored count in full,
 * layers being downloaded count their offset. Capped at 99 until the runtime says the pull is done,
 * because unpacking follows the download.
 */
export function layerProgress(layers: readonly LayerInfo[], present: ReadonlySet<string>, ingests: ReadonlyMap<string, IngestView>): number {
  const total = layers.reduce((a, l) => a + l.size, 0);
  if (total <= 0) return 0;
  let have = 0;
  for (const l of layers) {
    if (present.has(l.digest)) have += l.size;
    else have += Math.min(l.size, ingests.get(l.digest)?.offset ?? 0);
  }
  return Math.min(99, Math.floor((100 * have) / total));
}

/**
 * Watches containerd's content ingests while one image is pulled and reports its progress. Shared
 * polling: one ListStatuses call per interval serves every tracked pull on the node.
 */
export class ProgressPoller {
  private readonly watchers = new Set<(ingests: ReadonlyMap<string, IngestView>) => void>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private slotsTaken = 0;

  constructor(
    private readonly cri: CriClient,
    private readonly intervalMs = 1000,
    /**
     * Pulls followed at once. Each costs a registry round trip for its layer list and a content
     * lookup per layer; with a hundred small pulls finishing together that load would only slow the
     * pulls down, while the few long ones are what a watcher of progress looks at.
     */
    private readonly maxTracked = 10,
  ) {}

  /** A tracking slot, or undefined when maxTracked pulls are followed already; release it when done. */
  reserve(): (() => void) | undefined {
    if (this.slotsTaken >= this.maxTracked) return undefined;
    this.slotsTaken++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.slotsTaken--;
    };
  }

  /**
   * Tracks `layers` until the returned stop function is called; `onProgress` gets each new percent.
   * Layers found in the content store at the start are already on the node.
   */
  async track(layers: readonly LayerInfo[], onProgress: (percent: number) => void): Promise<{ stop: () => void }> {
    const present = new Set<string>();
    await Promise.all(
      layers.map(async (l) => {
        if ((await this.cri.contentSize(l.digest).catch(() => undefined)) !== undefined) present.add(l.digest);
      }),
    );
    const seen = new Set<string>();
    let last = -1;
    const watcher = (ingests: ReadonlyMap<string, IngestView>): void => {
      // A layer whose ingest was seen and is gone has been committed.
      for (const l of layers) {
        if (ingests.has(l.digest)) seen.add(l.digest);
        else if (seen.has(l.digest)) present.add(l.digest);
      }
      const p = layerProgress(layers, present, ingests);
      if (p !== last) {
        last = p;
        onProgress(p);
      }
    };
    this.watchers.add(watcher);
    this.schedule();
    return {
      stop: () => {
        this.watchers.delete(watcher);
        if (this.watchers.size === 0 && this.timer) {
          clearTimeout(this.timer);
          this.timer = undefined;
        }
      },
    };
  }

  private schedule(): void {
    if (this.timer || this.watchers.size === 0) return;
    this.timer = setTimeout(() => void this.poll(), this.intervalMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (this.polling) return;
    this.polling = true;
    try {
      const map = new Map<string, IngestView>();
      for (const s of await this.cri.ingests()) {
        const d = ingestDigest(s.ref);
        if (d) map.set(d, { offset: Number(s.offset), total: Number(s.total) });
      }
      for (const w of [...this.watchers]) w(map);
    } catch {
      // A runtime without the content API (CRI-O, cri-dockerd) reports 0 then 100.
    } finally {
      this.polling = false;
      this.schedule();
    }
  }
}
