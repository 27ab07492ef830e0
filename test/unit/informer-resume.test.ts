import { REFRESH_WATCH_SECONDS, refreshByList, resumeWaitMs, watchTimeoutSeconds } from '../../kube/informer.js';

const fixed = (x: number) => (): number => x;

describe('resumeWaitMs', () => {
  it('is the spread-out backoff while the last version stays fresh long enough', () => {
    expect(resumeWaitMs(4_000, 1_000, 45_000, fixed(0))).toBe(2_000);
    expect(resumeWaitMs(4_000, 1_000, 45_000, fixed(1))).toBe(6_000);
  });

  it('ends before the last version is resumeWithinMs old, spread over the second half of what is left', () => {
    // 30 s of backoff, a version 35 s old: 10 s left, so back within 5 to 10 s.
    expect(resumeWaitMs(30_000, 35_000, 45_000, fixed(0))).toBe(5_000);
    expect(resumeWaitMs(30_000, 35_000, 45_000, fixed(0.999))).toBeCloseTo(9_995, 0);
    expect(resumeWaitMs(30_000, 44_900, 45_000, fixed(0.5))).toBeCloseTo(75, 5);
  });

  it('leaves a version already that old to the backoff alone', () => {
    expect(resumeWaitMs(30_000, 45_000, 45_000, fixed(0))).toBe(15_000);
    expect(resumeWaitMs(8_000, 120_000, 45_000, fixed(0.5))).toBe(8_000);
  });
});

describe('watchTimeoutSeconds', () => {
  const last = (earlyEnds: number, versionAgeMs: number, refreshed = false) => ({ earlyEnds, versionAgeMs, refreshed });

  it('spreads an ordinary watch over [min, 2 min) seconds', () => {
    expect(watchTimeoutSeconds(last(0, 600_000), 30_000, 600, fixed(0))).toEqual({ seconds: 600, refresh: false });
    expect(watchTimeoutSeconds(last(0, 600_000), 30_000, 600, fixed(0.999))).toEqual({ seconds: 1199, refresh: false });
    expect(watchTimeoutSeconds(last(3, 29_999), 30_000, 300, fixed(0.5))).toEqual({ seconds: 450, refresh: false });
  });

  it('asks for a short watch, whose bookmark renews the version, after an early end with an ageing version', () => {
    expect(watchTimeoutSeconds(last(1, 30_000), 30_000, 600, fixed(0.5))).toEqual({ seconds: REFRESH_WATCH_SECONDS, refresh: true });
    expect(watchTimeoutSeconds(last(4, 70_000), 30_000, 600, fixed(0.5))).toEqual({ seconds: REFRESH_WATCH_SECONDS, refresh: true });
    // The server sends it 2 s before the deadline, on its bookmark tick (at most 1.25 s apart): the
    // watch must outlast both, and a timeout under 2 s gets no bookmark at all.
    expect(REFRESH_WATCH_SECONDS).toBeGreaterThanOrEqual(3);
  });

  it('never asks for two short watches in a row: without a bookmark nothing changed, and the version is the newest', () => {
    expect(watchTimeoutSeconds(last(2, 70_000, true), 30_000, 600, fixed(0))).toEqual({ seconds: 600, refresh: false });
  });
});

describe('refreshByList', () => {
  it('lists from the watch cache after an early end with an ageing version', () => {
    expect(refreshByList({ earlyEnds: 1, versionAgeMs: 5_000 }, 5_000, true)).toBe(true);
    expect(refreshByList({ earlyEnds: 3, versionAgeMs: 60_000 }, 5_000, true)).toBe(true);
  });

  it('resumes from the version itself while it is young, after a watch that lasted, or where lists read etcd', () => {
    expect(refreshByList({ earlyEnds: 1, versionAgeMs: 4_999 }, 5_000, true)).toBe(false);
    expect(refreshByList({ earlyEnds: 0, versionAgeMs: 600_000 }, 5_000, true)).toBe(false);
    expect(refreshByList({ earlyEnds: 2, versionAgeMs: 60_000 }, 5_000, false)).toBe(false);
  });
});
