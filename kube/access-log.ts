import { appendFileSync } from 'node:fs';
import type { IntentObserver, RequestObserver } from './rest.js';

/**
 * When KRUISE_TS_ACCESS_LOG names a file, appends every distinct API access of this process
 * (identity, verb, group, resource, namespace, name) as a JSON line, the ones it declares it may
 * make (RestClient.intend) included. The test run collects these to
 * prove deploy/'s RBAC grants exactly what the binaries use (hack/check-rbac.ts).
 */
export function accessRecorder(identity: string): { observe: RequestObserver; observeIntent: IntentObserver } | undefined {
  const file = process.env['KRUISE_TS_ACCESS_LOG'];
  if (!file) return undefined;
  const seen = new Set<string>();
  const record = (verb: string, resource: string, where: { group: string; namespace: string | undefined; name: string | undefined }): void => {
    const entry = JSON.stringify({ identity, verb, group: where.group, resource, namespace: where.namespace ?? '', name: where.name ?? '' });
    if (seen.has(entry)) return;
    seen.add(entry);
    appendFileSync(file, entry + '\n');
  };
  // Requests made and requests declared (RestClient.intend) alike: both need their grant.
  return { observe: (verb, resource, _status, _seconds, where) => record(verb, resource, where), observeIntent: record };
}

/** Calls every observer given. */
export function observers(...list: Array<RequestObserver | undefined>): RequestObserver {
  const active = list.filter((o): o is RequestObserver => o !== undefined);
  return (...args) => {
    for (const o of active) o(...args);
  };
}
