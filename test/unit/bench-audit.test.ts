import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditEntries, managerNodeImageWrites, managerWatchGaps, managerWritesInFlight } from '../../hack/bench/audit.js';

const MANAGER = 'system:serviceaccount:kruise-ts-system:kruise-ts-manager';
const DAEMON = 'system:serviceaccount:kruise-ts-system:kruise-ts-daemon';

function entry(e: { id: string; stage: string; verb: string; at: string; received?: string; user?: string; name?: string; subresource?: string; code?: number }): string {
  return JSON.stringify({
    requestReceivedTimestamp: `2026-12-02T10:00:${e.received ?? e.at}Z`,
    auditID: e.id,
    stage: e.stage,
    verb: e.verb,
    user: { username: e.user ?? MANAGER },
    objectRef: { resource: 'nodeimages', ...(e.name ? { name: e.name } : {}), ...(e.subresource ? { subresource: e.subresource } : {}) },
    responseStatus: { code: e.code ?? 200 },
    stageTimestamp: `2026-12-02T10:00:${e.at}Z`,
  });
}

function logOf(lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'audit-')), 'audit.log');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('auditEntries', () => {
  it('reads the entries after `from` that name the resource, skipping a half-written last line', () => {
    const first = entry({ id: 'a', stage: 'ResponseComplete', verb: 'update', at: '01.000', name: 'n1' });
    const file = logOf([first, entry({ id: 'b', stage: 'ResponseComplete', verb: 'update', at: '02.000', name: 'n2' })]);
    const from = Buffer.byteLength(`${first}\n`);
    writeFileSync(file, `${JSON.stringify({ auditID: 'c', objectRef: { resource: 'pods' } })}\n{"auditID":"d","objectRef":{"resource":"nodeimages"`, { flag: 'a' });
    expect(auditEntries(file, from, '"nodeimages"').map((e) => e.auditID)).toEqual(['b']);
    expect(auditEntries(file, 0, '"nodeimages"').map((e) => e.auditID)).toEqual(['a', 'b']);
    expect(auditEntries(file, statSync(file).size, '"nodeimages"')).toEqual([]);
    expect(auditEntries(join(file, 'missing'), 0, '"nodeimages"')).toEqual([]);
  });
});

describe('managerWatchGaps', () => {
  it('counts the watches and the longest time none was open', () => {
    const log = logOf([
      // Open before the window: only its end is logged.
      entry({ id: 'w0', stage: 'ResponseComplete', verb: 'watch', at: '01.000' }),
      entry({ id: 'w1', stage: 'ResponseStarted', verb: 'watch', at: '03.000' }),
      entry({ id: 'd1', stage: 'ResponseStarted', verb: 'watch', at: '04.000', user: DAEMON }),
      entry({ id: 'w1', stage: 'ResponseComplete', verb: 'watch', at: '05.000', received: '03.000' }),
      entry({ id: 'd1', stage: 'ResponseComplete', verb: 'watch', at: '06.000', user: DAEMON }),
      // Asked again 1.5 s after the end, and still open: a server that logs ResponseStarted at the start.
      entry({ id: 'w2', stage: 'ResponseStarted', verb: 'watch', at: '06.600', received: '06.500' }),
    ]);
    expect(managerWatchGaps(auditEntries(log, 0, '"nodeimages"'), 'nodeimages')).toEqual({ requests: 3, longestGapMs: 2000, lists: 0, longestListMs: 0 });
  });

  it('reads a watch from its end alone, as kube-apiserver 1.20 logs both stages then', () => {
    const log = logOf([
      entry({ id: 'w1', stage: 'ResponseStarted', verb: 'watch', at: '05.000', received: '03.000' }),
      entry({ id: 'w1', stage: 'ResponseComplete', verb: 'watch', at: '05.000', received: '03.000' }),
      // Asked again 7 s after w1's end; its entries came when it ended, 8 s later.
      entry({ id: 'w2', stage: 'ResponseComplete', verb: 'watch', at: '20.000', received: '12.000' }),
      entry({ id: 'w2', stage: 'ResponseStarted', verb: 'watch', at: '20.000', received: '12.000' }),
    ]);
    expect(managerWatchGaps(auditEntries(log, 0, '"nodeimages"'), 'nodeimages')).toEqual({ requests: 2, longestGapMs: 7000, lists: 0, longestListMs: 0 });
  });

  it("counts the manager's lists between watches and the longest, not a daemon's", () => {
    const log = logOf([
      entry({ id: 'w1', stage: 'ResponseStarted', verb: 'watch', at: '01.000' }),
      entry({ id: 'w1', stage: 'ResponseComplete', verb: 'watch', at: '02.000', received: '01.000' }),
      // A re-list after a 410: 20 s of the 21 s gap.
      entry({ id: 'l1', stage: 'ResponseComplete', verb: 'list', at: '22.500', received: '02.500' }),
      entry({ id: 'l2', stage: 'ResponseComplete', verb: 'list', at: '23.000', received: '01.000', user: DAEMON }),
      entry({ id: 'w2', stage: 'ResponseStarted', verb: 'watch', at: '23.000', received: '22.900' }),
    ]);
    expect(managerWatchGaps(auditEntries(log, 0, '"nodeimages"'), 'nodeimages')).toEqual({ requests: 2, longestGapMs: 20900, lists: 1, longestListMs: 20000 });
  });

  it('finds no gap while a watch stays open', () => {
    const log = logOf([entry({ id: 'w1', stage: 'ResponseStarted', verb: 'watch', at: '03.000' })]);
    expect(managerWatchGaps(auditEntries(log, 0, '"nodeimages"'), 'nodeimages')).toEqual({ requests: 1, longestGapMs: 0, lists: 0, longestListMs: 0 });
    expect(managerWatchGaps(auditEntries(log, 0, '"nodeimages"'), 'containerrecreaterequests')).toEqual({ requests: 0, longestGapMs: 0, lists: 0, longestListMs: 0 });
  });
});

describe('managerNodeImageWrites', () => {
  it('times the write that completed placing, counting only the manager\'s accepted spec writes (updates and patches)', () => {
    const log = logOf([
      entry({ id: 'a', stage: 'ResponseComplete', verb: 'update', at: '01.000', name: 'n1' }),
      entry({ id: 'b', stage: 'ResponseComplete', verb: 'update', at: '02.000', name: 'n1', subresource: 'status' }),
      entry({ id: 'c', stage: 'ResponseComplete', verb: 'update', at: '03.000', name: 'n2', code: 409 }),
      entry({ id: 'd', stage: 'ResponseComplete', verb: 'patch', at: '04.000', name: 'n2' }),
      entry({ id: 'g', stage: 'ResponseComplete', verb: 'get', at: '04.500', name: 'n2' }),
      entry({ id: 'e', stage: 'ResponseComplete', verb: 'update', at: '05.000', name: 'other' }),
      entry({ id: 'f', stage: 'ResponseComplete', verb: 'update', at: '06.000', name: 'n1' }),
    ]);
    expect(managerNodeImageWrites(auditEntries(log, 0, '"nodeimages"'), new Set(['n1', 'n2']), 2)).toEqual({ count: 3, placedMs: Date.parse('2026-12-02T10:00:04.000Z') });
    expect(managerNodeImageWrites(auditEntries(log, 0, '"nodeimages"'), new Set(['n1', 'n2']), 5).placedMs).toBe(Date.parse('2026-12-02T10:00:06.000Z'));
  });
});

describe('managerWritesInFlight', () => {
  it("measures the time with none and with few of the manager's spec writes in flight, up to the end given", () => {
    const log = logOf([
      // 00–02 two writes, 02–03 one, 03–04 none, 04–06 one (one answered as the next is received: no gap).
      entry({ id: 'a', stage: 'ResponseComplete', verb: 'update', received: '00.000', at: '02.000', name: 'n1' }),
      entry({ id: 'b', stage: 'ResponseComplete', verb: 'update', received: '00.000', at: '03.000', name: 'n2', code: 409 }),
      entry({ id: 'c', stage: 'ResponseComplete', verb: 'update', received: '04.000', at: '05.000', name: 'n1' }),
      entry({ id: 'd', stage: 'ResponseComplete', verb: 'update', received: '05.000', at: '06.000', name: 'n2' }),
      // Not the manager's spec writes to these NodeImages.
      entry({ id: 'e', stage: 'ResponseComplete', verb: 'update', received: '03.000', at: '04.000', name: 'n1', subresource: 'status' }),
      entry({ id: 'f', stage: 'ResponseComplete', verb: 'update', received: '03.000', at: '04.000', name: 'other' }),
      entry({ id: 'g', stage: 'ResponseComplete', verb: 'update', received: '03.000', at: '04.000', name: 'n2', user: DAEMON }),
    ]);
    const entries = auditEntries(log, 0, '"nodeimages"');
    const names = new Set(['n1', 'n2']);
    expect(managerWritesInFlight(entries, names, Date.parse('2026-12-02T10:00:06.000Z'), 2)).toEqual({ noneMs: 1000, fewerMs: 4000 });
    // Cut at 04.500: the last write's time is not counted.
    expect(managerWritesInFlight(entries, names, Date.parse('2026-12-02T10:00:04.500Z'), 2)).toEqual({ noneMs: 1000, fewerMs: 2500 });
    expect(managerWritesInFlight([], names, 0, 2)).toEqual({ noneMs: 0, fewerMs: 0 });
  });
});
