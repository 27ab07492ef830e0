// What the local cluster's API server recorded of kruise-ts's requests (its audit log covers the
// ServiceAccounts of kruise-ts-system: hack/lib/cluster.sh). A benchmark times the manager's writes
// by it, not by its own watch: under a burst the API server closes watches that lag, and a
// watcher's view can trail the writes by tens of seconds.
import { existsSync, readFileSync, statSync } from 'node:fs';

export interface AuditEntry {
  auditID?: string;
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; name?: string };
  responseStatus?: { code?: number };
  stageTimestamp?: string;
  requestReceivedTimestamp?: string;
}

/** Where the log ends now: what a measurement reads from. */
export function auditSize(auditLog: string): number {
  return existsSync(auditLog) ? statSync(auditLog).size : 0;
}

/**
 * The entries logged since `from` (bytes into the log) whose line holds `mustContain`: read once and
 * handed to the functions below, so a measurement reads its slice of the log one time.
 */
export function auditEntries(auditLog: string, from: number, mustContain: string): AuditEntry[] {
  const text = existsSync(auditLog) ? readFileSync(auditLog).subarray(from).toString('utf8') : '';
  // The last line may be half written.
  return text.split('\n').flatMap((line) => (line.includes(mustContain) && line.endsWith('}') ? [JSON.parse(line) as AuditEntry] : []));
}

/** The manager's answered writes (updates and guarded patches) of the NodeImage specs (not their status) of `names`, whatever the answer. */
export function managerSpecWrites(entries: readonly AuditEntry[], names: ReadonlySet<string>): AuditEntry[] {
  return entries.filter((e) => {
    const ref = e.objectRef;
    return (
      e.stage === 'ResponseComplete' &&
      (e.verb === 'update' || e.verb === 'patch') &&
      ref?.resource === 'nodeimages' &&
      ref.subresource === undefined &&
      (e.user?.username?.endsWith(':kruise-ts-manager') ?? false) &&
      names.has(ref.name ?? '')
    );
  });
}

/**
 * The manager's NodeImage spec writes to `names` among `entries`: how many the API server accepted,
 * and when it answered the `placing`-th: the one that completed a fan-out of that many, not counting
 * later writes that take a finished job's tag off. With fewer, the last (one write can place
 * several jobs' tags); NaN with none.
 */
export function managerNodeImageWrites(entries: readonly AuditEntry[], names: ReadonlySet<string>, placing: number): { count: number; placedMs: number } {
  const answered = managerSpecWrites(entries, names)
    .filter((e) => (e.responseStatus?.code ?? 0) < 300)
    .map((e) => Date.parse(e.stageTimestamp ?? ''))
    .sort((a, b) => a - b);
  return { count: answered.length, placedMs: answered[Math.min(placing, answered.length) - 1] ?? Number.NaN };
}

/**
 * How steadily the manager kept its NodeImage spec writes to `names` going, from the API server
 * receiving its first to `untilMs`: the time none was in flight (received, not yet answered) and
 * the time fewer than `few` were. A fan-out that waits for each round's slowest write shows here.
 */
export function managerWritesInFlight(entries: readonly AuditEntry[], names: ReadonlySet<string>, untilMs: number, few: number): { noneMs: number; fewerMs: number } {
  const edges = managerSpecWrites(entries, names).flatMap((e): Array<[number, number]> => [
    [Date.parse(e.requestReceivedTimestamp ?? ''), 1],
    [Date.parse(e.stageTimestamp ?? ''), -1],
  ]);
  edges.sort((a, b) => a[0] - b[0]);
  let inFlight = 0;
  let last = edges[0]?.[0] ?? untilMs;
  let noneMs = 0;
  let fewerMs = 0;
  for (const [at, d] of [...edges, [untilMs, 0] as [number, number]]) {
    const span = Math.max(0, Math.min(at, untilMs) - last);
    if (inFlight === 0) noneMs += span;
    if (inFlight < few) fewerMs += span;
    last = Math.max(last, Math.min(at, untilMs));
    inFlight += d;
  }
  return { noneMs, fewerMs };
}

/**
 * The manager's watches of `resource` among `entries`: how many it started, and the longest time it
 * had none open, from a watch's end to the API server receiving the next one. A watch is the span
 * from its request received to its ResponseComplete: kube-apiserver 1.20 logs ResponseStarted only
 * as a watch ends, so on it a watch still open when the slice ends, and the gap before it, show only
 * once it has ended; a server that logs ResponseStarted at the start shows such a watch open to the
 * slice's end. Also its lists of `resource` and the longest one: past start-up its informer lists
 * only after a 410, and a list of every NodeImage at 5,000 nodes can fill a gap.
 */
export function managerWatchGaps(
  entries: readonly AuditEntry[],
  resource: string,
): { requests: number; longestGapMs: number; lists: number; longestListMs: number } {
  const watches = new Map<string, [number, number]>();
  let lists = 0;
  let longestListMs = 0;
  for (const e of entries) {
    if (e.objectRef?.resource !== resource || !e.user?.username?.endsWith(':kruise-ts-manager')) continue;
    const received = Date.parse(e.requestReceivedTimestamp ?? e.stageTimestamp ?? '');
    const end = e.stage === 'ResponseComplete' ? Date.parse(e.stageTimestamp ?? '') : Infinity;
    if (e.verb === 'list' && end !== Infinity) {
      lists++;
      longestListMs = Math.max(longestListMs, end - received);
    } else if (e.verb === 'watch' && (end !== Infinity || !watches.has(e.auditID ?? ''))) {
      watches.set(e.auditID ?? '', [received, end]);
    }
  }
  const spans = [...watches.values()].sort((a, b) => a[0] - b[0]);
  let openUntil = spans[0]?.[1] ?? 0;
  let longestGapMs = 0;
  for (const [from, to] of spans) {
    longestGapMs = Math.max(longestGapMs, from - openUntil);
    openUntil = Math.max(openUntil, to);
  }
  return { requests: watches.size, longestGapMs, lists, longestListMs };
}
