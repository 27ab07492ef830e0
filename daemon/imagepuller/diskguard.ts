import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { CriClient } from '../cri/client.js';

/** Usage of a filesystem as df counts it: used / (used + available to unprivileged users). */
export function usedPercent(st: { blocks: number; bfree: number; bavail: number }): number {
  const used = st.blocks - st.bfree;
  const denom = used + st.bavail;
  return denom > 0 ? (100 * used) / denom : 0;
}

const LOOK_EVERY_MS = 5000;

interface Look {
  at: number;
  verdict: Promise<string | undefined>;
  /** Set once the look answered: whether the disk had room. */
  room?: boolean;
}

/**
 * Refuses a pull when the runtime's image filesystem is fuller than the watermark, so image pulls
 * never take the disk the kubelet needs. Returns the refusal message, or undefined to go ahead;
 * when the filesystem cannot be inspected (not mounted into the daemon) it does not block.
 */
export class DiskGuard {
  private last: Look | undefined;
  private refreshing = false;

  constructor(
    private readonly cri: CriClient,
    private readonly watermarkPercent: number,
    private readonly hostRoot: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Looks at most every few seconds: a burst of pulls shares one look at the disk. While the disk
   * has room, later pulls go by that verdict and the next look runs beside them, so no pull waits
   * for a runtime call and a statfs (a filling disk is still seen within one look); without a
   * verdict, or when the disk was full, the pull waits for a fresh look (room is seen at once).
   */
  check(): Promise<string | undefined> {
    const last = this.last;
    if (last !== undefined && this.now() - last.at < LOOK_EVERY_MS) return last.verdict;
    if (last?.room === true) {
      this.refresh();
      return last.verdict;
    }
    this.last = this.start();
    return this.last.verdict;
  }

  private start(): Look {
    const look: Look = { at: this.now(), verdict: this.look() };
    void look.verdict.then((v) => {
      look.room = v === undefined;
    });
    return look;
  }

  private refresh(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    const look = this.start();
    void look.verdict.then(() => {
      this.last = look;
      this.refreshing = false;
    });
  }

  private async look(): Promise<string | undefined> {
    if (this.watermarkPercent >= 100) return undefined;
    let mountpoint: string | undefined;
    try {
      // A runtime that is down must not hold every pull for the call's deadline: the pull finds out.
      const info = await this.cri.image('ImageFsInfo', {}, { waitForReady: false });
      mountpoint = info.image_filesystems[0]?.fs_id?.mountpoint;
    } catch {
      return undefined;
    }
    if (!mountpoint) return undefined;
    let pct: number;
    try {
      pct = usedPercent(await statfs(join(this.hostRoot, mountpoint)));
    } catch {
      return undefined;
    }
    if (pct <= this.watermarkPercent) return undefined;
    return `image filesystem ${mountpoint} is ${pct.toFixed(0)}% full, above the --image-fs-high-watermark of ${this.watermarkPercent}%; not pulling so the kubelet keeps its disk`;
  }
}
