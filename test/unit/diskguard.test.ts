import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { CriClient } from '../../daemon/cri/client.js';
import { DiskGuard } from '../../daemon/imagepuller/diskguard.js';

// The runtime's answer is all the guard reads of it: which filesystem holds the images. A real
// directory at watermark 0 % is over it; a mountpoint that does not exist cannot be inspected and
// never blocks.
function runtime(): { cri: CriClient; looks: () => number; full: (yes: boolean) => void } {
  const dir = mkdtempSync(`${tmpdir()}/diskguard-`);
  let full = false;
  let looks = 0;
  const cri = {
    image: async () => {
      looks++;
      return { image_filesystems: [{ fs_id: { mountpoint: full ? dir : `${dir}/absent` } }] };
    },
  } as unknown as CriClient;
  return { cri, looks: () => looks, full: (yes) => void (full = yes) };
}
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 20));

/** The guard's verdict once its look beside the pulls has landed (a statfs on a busy machine can take a while). */
async function verdictAfterLook(guard: DiskGuard): Promise<string | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await guard.check();
    if (v !== undefined || Date.now() > deadline) return v;
    await settle();
  }
}

describe('DiskGuard', () => {
  it('makes pulls wait for the first look and for looks at a full disk, never for a look while there was room', async () => {
    const rt = runtime();
    let now = 1_000_000;
    const guard = new DiskGuard(rt.cri, 0, '/', () => now);
    await expect(guard.check()).resolves.toBeUndefined();
    expect(rt.looks()).toBe(1);
    // Within the interval, a burst shares the look.
    await guard.check();
    expect(rt.looks()).toBe(1);

    // Later, the disk filled: the pull goes by the last verdict while the next look runs.
    now += 6_000;
    rt.full(true);
    const during = guard.check();
    expect(rt.looks()).toBe(2);
    await expect(during).resolves.toBeUndefined();
    await expect(verdictAfterLook(guard)).resolves.toMatch(/^image filesystem .* is \d+% full, above the --image-fs-high-watermark of 0%/);
    expect(rt.looks()).toBe(2);

    // Full and stale: the pull waits for a fresh look, and sees the room at once.
    now += 6_000;
    rt.full(false);
    await expect(guard.check()).resolves.toBeUndefined();
    expect(rt.looks()).toBe(3);
  });

  it('starts one look beside the pulls however many come while it runs', async () => {
    const rt = runtime();
    let now = 0;
    const guard = new DiskGuard(rt.cri, 0, '/', () => now);
    await guard.check();
    now = 10_000;
    await Promise.all([guard.check(), guard.check(), guard.check()]);
    await settle();
    expect(rt.looks()).toBe(2);
  });
});
