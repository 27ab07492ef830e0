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
  it('keeps all reconciles together within the total', async () => {
    const slots = new WriteSlots(4);
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
      w.finishOne();
    }
    await Promise.all(all);
    expect(most).toBe(4);
    expect(w.started).toHaveLength(30);
  });

  it('gives a reconcile alone every slot', async () => {
    const slots = new WriteSlots(4);
    const w = writes();
    const slot = slots.forReconcile();
    const all = Array.from({ length: 10 }, () => slot(() => w.run('a')));
    await tick();
    expect(w.running).toHaveLength(4);
    for (let i = 0; i < 10; i++) {
      w.finishOne();
      await tick();
    }
    await Promise.all(all);
  });

  it('lets a second reconcile write as soon as the first one\'s waiting write has had its turn', async () => {
    const slots = new WriteSlots(2);
    const w = writes();
    const big = slots.forReconcile();
    const small = slots.forReconcile();
    const all = [...Array.from({ length: 50 }, () => big(() => w.run('big'))), small(() => w.run('small'))];
    await tick();
    expect(w.running).toEqual(['big', 'big']);
    for (let i = 0; i < 51; i++) {
      w.finishOne();
      await tick();
    }
    await Promise.all(all);
    // Two big writes run, one big write waited first: the second freed slot is small's.
    expect(w.started.indexOf('small')).toBe(3);
  });

  it('hands freed slots to waiting reconciles in turn', async () => {
    const slots = new WriteSlots(2);
    const w = writes();
    const a = slots.forReconcile();
    const b = slots.forReconcile();
    const all = [...Array.from({ length: 6 }, () => a(() => w.run('a'))), ...Array.from({ length: 3 }, () => b(() => w.run('b')))];
    for (let i = 0; i < 9; i++) {
      await tick();
      w.finishOne();
    }
    await Promise.all(all);
    // a's two run at once; then a (waiting first) and b take turns until b has none left.
    expect(w.started.join('')).toBe('aaabababa');
  });
});
