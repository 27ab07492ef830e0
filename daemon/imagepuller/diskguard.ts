import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import type { CriClient } from '../cri/client.js';

/** Usage of a filesystem as df counts it: used / (used + available to unprivileged users). */
export function usedPercent(st: { blocks: number; bfree: number; bavail: number }): number {
  const used = st.blocks - st.bfree;
  const denom = used + st.bavail;
  return denom > 0 ? (100 * used) / denom : 0;
}

/**
 * Refuses a pull when the runtime's image filesystem is fuller than the watermark, so image pulls
 * never take the disk the kubelet needs. Returns the refusal message, or undefined to go ahead;
 * when the filesystem cannot be inspected (not mounted into the daemon) it does not block.
 */
export class DiskGuard {
  private last: { at: number; verdict: Promise<string | undefined> } | undefined;

  constructor(
    private readonly cri: CriClient,
    private readonly watermarkPercent: number,
    private readonly hostRoot: string,
  ) {}

  /** Checks at most every few seconds: a burst of pulls shares one look at the disk. */
  check(): Promise<string | undefined> {
    if (this.last && Date.now() - this.last.at < 5000) return this.last.verdict;
    this.last = { at: Date.now(), verdict: this.look() };
    return this.last.verdict;
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
