import { WriteSlots } from '../../kube/write-slots.js';

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/** Writes that finish when told, recording who was in flight when each started. */
function writes(): { run: (who: string) => Promise<void>; running: string[]; started: string[]; finishOne: () => void } {
  const running: string[] = [];
  const started: string[] = [];
  const waiting: Array<() => void> = [];
  return {
    running,
    started,
    run: (who) =>
      new Promise<void>((resolve) => {
        running.push(who);
        started.push(who);
        waiting.push(() => {
          running.splice(running.indexOf(who), 1);
          resolve();
        });
      }),
    finishOne: () => waiting.shift()?.(),
  };
}

describe('WriteSlots', () => {
  it('keeps all reconciles within the total and each within its share', async () => {
    const slots = new WriteSlots(4, 3);
    const w = writes();
    const all: Array<Promise<void>> = [];
    for (const who of ['a', 'b', 'c']) {
      const slot = slots.forReconcile();
      for (let i = 0; i < 10; i++) all.push(slot(() => w.run(who)));
    }
    let most = 0;
    for (let i = 0; i < 30; i++) {
      await tick();
      most = Math.max(most, w.running.length);
      for (const who of ['a', 'b', 'c']) expect(w.running.filter((x) => x === who).length).toBeLessThanOrEqual(3);
      w.finishOne();
    }
    await Promise.all(all);
    expect(most).toBe(4);
    expect(w.started).toHaveLength(30);
  });

  it('lets a second reconcile write before the first one has finished its fan-out', async () => {
    const slots = new WriteSlots(2, 1);
    const w = writes();
    const big = slots.forReconcile();
    const small = slots.forReconcile();
    const all = [...Array.from({ length: 50 }, () => big(() => w.run('big'))), small(() => w.run('small'))];
    await tick();
    expect(w.running.sort()).toEqual(['big', 'small']);
    for (let i = 0; i < 51; i++) {
      w.finishOne();
      await tick();
    }
    await Promise.all(all);
    expect(w.started.indexOf('small')).toBeLessThan(2);
  });
});
