// Proves deploy/'s RBAC is exactly what the binaries need: every API call the test run recorded
// (KRUISE_TS_ACCESS_LOG) is allowed by the rendered roles, and every granted verb was used by some
// call. Calls that only timing decides (a conflict's re-read, an event counted up) are recorded
// where the code could make them (RestClient.intend), so no run has to be lucky to cover them.
// Run after the test suite (npm test does).
//   node dist/hack/check-rbac.js ACCESS_LOG
//   node dist/hack/check-rbac.js --audit AUDIT_LOG   (an installation's pods, from the API server's audit log)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deployDir, render, type Rendered } from './kustomize.js';
import { DEFAULT_KRUISE_NAMESPACE } from '../api/installation.js';

export interface Access {
  identity: string;
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}

export interface Grant {
  identity: string;
  /** '' for cluster-wide. */
  namespace: string;
  group: string;
  resource: string;
  verb: string;
  resourceNames?: string[];
}

const identities: Record<string, string> = { 'kruise-ts-manager': 'manager', 'kruise-ts-daemon': 'daemon' };

/** Every (identity, namespace, group, resource, verb) the rendered RBAC grants to kruise-ts's ServiceAccounts. */
export function grants(objects: readonly Rendered[]): Grant[] {
  const roles = new Map<string, Rule[]>();
  for (const o of objects) {
    if (o.kind === 'ClusterRole' || o.kind === 'Role') roles.set(`${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`, (o['rules'] as Rule[] | undefined) ?? []);
  }
  const out: Grant[] = [];
  for (const b of objects) {
    if (b.kind !== 'ClusterRoleBinding' && b.kind !== 'RoleBinding') continue;
    const ref = b['roleRef'] as { kind: string; name: string };
    const namespace = b.kind === 'RoleBinding' ? (b.metadata?.namespace ?? '') : '';
    const rules = roles.get(`${ref.kind}/${ref.kind === 'Role' ? namespace : ''}/${ref.name}`) ?? [];
    for (const s of (b['subjects'] as Array<{ kind: string; name: string; namespace?: string }> | undefined) ?? []) {
      const identity = s.kind === 'ServiceAccount' && s.namespace === DEFAULT_KRUISE_NAMESPACE ? identities[s.name] : undefined;
      if (!identity) continue;
      for (const r of rules) {
        for (const group of r.apiGroups ?? []) {
          for (const resource of r.resources ?? []) {
            for (const verb of r.verbs ?? []) out.push({ identity, namespace, group, resource, verb, ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}) });
          }
        }
      }
    }
  }
  return out;
}

export function allows(g: Grant, a: Access): boolean {
  if (g.identity !== a.identity || g.group !== a.group || g.resource !== a.resource || g.verb !== a.verb) return false;
  if (g.namespace !== '' && g.namespace !== a.namespace) return false;
  return !g.resourceNames || g.resourceNames.includes(a.name);
}

interface AuditEvent {
  verb?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
}

/** The ServiceAccount usernames of kruise-ts's pods, by the identity check-rbac knows them as. */
const serviceAccountUsers: Record<string, string> = Object.fromEntries(Object.entries(identities).map(([sa, id]) => [`system:serviceaccount:${DEFAULT_KRUISE_NAMESPACE}:${sa}`, id]));

/**
 * What kruise-ts's pods called, from the API server's audit log (JSON lines, one event per request):
 * the requests of its ServiceAccounts, and which of them the API server refused (403).
 */
export function accessesFromAudit(lines: readonly string[]): { accesses: Access[]; forbidden: Access[] } {
  const accesses: Access[] = [];
  const forbidden: Access[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as AuditEvent;
    const identity = serviceAccountUsers[e.user?.username ?? ''];
    const ref = e.objectRef;
    // Requests for no object (discovery documents, /version) need no RBAC of kruise-ts's.
    if (!identity || !ref?.resource || !e.verb) continue;
    const a: Access = {
      identity,
      verb: e.verb,
      group: ref.apiGroup ?? '',
      resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource,
      namespace: ref.namespace ?? '',
      name: ref.name ?? '',
    };
    accesses.push(a);
    if (e.responseStatus?.code === 403) forbidden.push(a);
  }
  return { accesses, forbidden };
}

export function check(objects: readonly Rendered[], accesses: readonly Access[]): { refused: Access[]; unused: Grant[] } {
  const gs = grants(objects);
  return {
    // Discovery documents (resource '') need no RBAC of ours: system:discovery grants them to all.
    refused: accesses.filter((a) => (a.identity === 'manager' || a.identity === 'daemon') && a.resource !== '' && !gs.some((g) => allows(g, a))),
    unused: gs.filter((g) => !accesses.some((a) => allows(g, a))),
  };
}

/** Calls counted once per identity, verb, resource and namespace (names aside). */
const distinctCalls = (accesses: readonly Access[]): number => new Set(accesses.map((a) => `${a.identity} ${a.verb} ${a.group}/${a.resource} ${a.namespace}`)).size;

const show = (x: Access | Grant): string =>
  `${x.identity}: ${x.verb} ${x.group === '' ? '' : `${x.group}/`}${x.resource}${x.namespace ? ` in ${x.namespace}` : ' (cluster-wide)'}${'name' in x && x.name ? ` ${x.name}` : ''}${'resourceNames' in x && x.resourceNames ? ` [${x.resourceNames.join(',')}]` : ''}`;

/**
 * `--audit AUDIT_LOG`: what an installation's pods called with their own ServiceAccount tokens must
 * all be granted and none refused. A run that exercised a part of kruise-ts leaves grants unused:
 * they are listed, not failed.
 */
function checkAudit(file: string): void {
  const { accesses, forbidden } = accessesFromAudit(readFileSync(file, 'utf8').split('\n'));
  const { refused, unused } = check(render(join(deployDir(), 'base')), accesses);
  for (const a of forbidden) console.error(`refused by the API server (403): ${show(a)}`);
  for (const a of refused) console.error(`not granted by deploy/ but called: ${show(a)}`);
  for (const g of unused) console.log(`granted, not called in this run: ${show(g)}`);
  const distinct = distinctCalls(accesses);
  if (forbidden.length > 0 || refused.length > 0 || distinct === 0) {
    console.error(`check-rbac: ${file}: ${forbidden.length} requests refused, ${refused.length} calls outside deploy/'s RBAC, ${distinct} distinct calls`);
    process.exit(1);
  }
  console.log(`check-rbac: the pods' ${accesses.length} requests (${distinct} distinct calls) are all granted by deploy/, none refused`);
}

if (process.argv[1]?.endsWith('check-rbac.js') && process.argv[2] === '--audit') {
  checkAudit(process.argv[3] ?? '');
} else if (process.argv[1]?.endsWith('check-rbac.js')) {
  const file = process.argv[2] ?? join(import.meta.dirname, '..', '..', '.test-output', 'access.jsonl');
  if (!existsSync(file)) {
    console.error(`check-rbac: ${file} does not exist: run the integration tests first (npm test does)`);
    process.exit(1);
  }
  const accesses = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Access);
  const { refused, unused } = check(render(join(deployDir(), 'base')), accesses);
  for (const a of refused) console.error(`not granted by deploy/ but called: ${show(a)}`);
  for (const g of unused) console.error(`granted by deploy/ but never called: ${show(g)}`);
  if (refused.length > 0 || unused.length > 0) {
    console.error(`check-rbac: deploy/base/rbac.yaml does not match what the binaries call (${refused.length} missing, ${unused.length} unused)`);
    process.exit(1);
  }
  console.log(`check-rbac: deploy/ grants exactly the ${distinctCalls(accesses)} distinct calls the binaries made`);
}
