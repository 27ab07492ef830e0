import { join } from 'node:path';
import {
  DEFAULT_LEADER_ELECTION_ID,
  DEFAULT_MANAGER_DEPLOYMENT,
  DEFAULT_WEBHOOK_CERT_SECRET,
  DEFAULT_WEBHOOK_SERVICE,
  MUTATING_WEBHOOK_CONFIGURATION,
  VALIDATING_WEBHOOK_CONFIGURATION,
} from '../../api/installation.js';
import { deployDir, render } from '../../hack/kustomize.js';
import { openKruiseObjects } from '../helpers/openkruise.js';

// Nothing kruise-ts installs or creates carries a name OpenKruise's chart uses, except the four CRDs
// both install; a `kubectl apply -k deploy/` or `kubectl delete -k deploy/` beside OpenKruise can
// therefore never touch one of its objects.
const key = (o: { kind?: string; metadata?: { name?: string; namespace?: string } }): string => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

describe("kruise-ts's names beside OpenKruise's", () => {
  const ours = render(join(deployDir()));
  const theirs = openKruiseObjects();

  it('deploy/ shares no object with OpenKruise v1.9 but the CRDs, and no namespace', () => {
    const theirKeys = new Set(theirs.map(key));
    expect(ours.filter((o) => o.kind !== 'CustomResourceDefinition' && theirKeys.has(key(o))).map(key)).toEqual([]);
    const theirNamespaces = new Set(theirs.filter((o) => o.kind === 'Namespace').map((o) => o.metadata?.name));
    expect(ours.filter((o) => o.kind === 'Namespace' && theirNamespaces.has(o.metadata?.name)).map(key)).toEqual([]);
    expect(ours.filter((o) => o.metadata?.namespace !== undefined && theirNamespaces.has(o.metadata.namespace)).map(key)).toEqual([]);
  });

  it('what the manager creates at run time has names of its own too', () => {
    const theirNames = new Set(theirs.map((o) => o.metadata?.name));
    for (const name of [DEFAULT_LEADER_ELECTION_ID, DEFAULT_MANAGER_DEPLOYMENT, DEFAULT_WEBHOOK_CERT_SECRET, DEFAULT_WEBHOOK_SERVICE, MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION]) {
      expect(theirNames.has(name)).toBe(false);
      expect(name.startsWith('kruise-ts-')).toBe(true);
    }
    // Upstream's lease is kruise-manager, its webhooks *.kb.io.
    expect(DEFAULT_LEADER_ELECTION_ID).not.toBe('kruise-manager');
  });
});
