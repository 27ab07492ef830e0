// What the local cluster's API server recorded of kruise-ts's requests (its audit log covers the
// ServiceAccounts of kruise-ts-system: hack/lib/cluster.sh). A benchmark times the manager's writes
// by it, not by its own watch: under a burst the API server closes watches that lag, and a
// watcher's view can trail the writes by tens of seconds.
import { existsSync, readFileSync, statSync } from 'node:fs';

interface AuditEntry {
  stage?: string;
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; name?: string };
  responseStatus?: { code?: number };
  stageTimestamp?: string;
}

/** Where the log ends now: what a measurement reads from. */
export function auditSize(auditLog: string): number {
  return existsSync(auditLog) ? statSync(auditLog).size : 0;
}

/**
 * The manager's NodeImage spec writes to `names` logged since `from` (bytes into the log): how many
 * the API server accepted, and when it answered the `placing`-th (NaN with fewer): the one that
 * completed a fan-out of that many, not counting later writes that take a finished job's tag off.
 */
export function managerNodeImageWrites(auditLog: string, from: number, names: ReadonlySet<string>, placing: number): { count: number; placedMs: number } {
  const answered: number[] = [];
  const text = existsSync(auditLog) ? readFileSync(auditLog).subarray(from).toString('utf8') : '';
  for (const line of text.split('\n')) {
    // The last line may be half written.
    if (!line.includes('"nodeimages"') || !line.endsWith('}')) continue;
    const e = JSON.parse(line) as AuditEntry;
    const ref = e.objectRef;
    if (e.stage !== 'ResponseComplete' || e.verb !== 'update' || ref?.resource !== 'nodeimages' || ref.subresource !== undefined) continue;
    if (!e.user?.username?.endsWith(':kruise-ts-manager') || !names.has(ref.name ?? '') || (e.responseStatus?.code ?? 0) >= 300) continue;
    answered.push(Date.parse(e.stageTimestamp ?? ''));
  }
  answered.sort((a, b) => a - b);
  return { count: answered.length, placedMs: answered[Math.min(placing, answered.length) - 1] ?? Number.NaN };
}
