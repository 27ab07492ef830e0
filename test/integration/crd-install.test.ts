import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { installCrds } from '../../kube/crds.js';
import { core, Resource } from '../../kube/resource.js';
import type { KubeObject } from '../../api/types/common.js';
import { restClient } from '../helpers/kube.js';

// installCrds returns once clients can discover what it installed: the API server marks a CRD
// Established before its discovery controller lists each version, and global setup, the demo and
// hack/install-crds.ts discover the served versions right after it (one CI run discovered
// NodeImage as v1alpha1 alone in that moment and wrote through the v1alpha1 schema).
const rest = restClient();
const group = `crdinstall${Math.random().toString(36).slice(2, 7)}.kruise-ts.test`;
const plurals = ['widgets', 'gadgets', 'sprockets'];
const dir = mkdtempSync(join(tmpdir(), 'crd-install-'));
const crds = new Resource<KubeObject>(rest, core.crds);

function crd(plural: string, versions: string[]): object {
  const kind = plural[0]?.toUpperCase() + plural.slice(1, -1);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === versions.length - 1,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      })),
    },
  };
}

const discovered = async (version: string): Promise<string[]> =>
  rest.request<{ resources?: Array<{ name: string }> }>('GET', `/apis/${group}/${version}`).then(
    (l) => (l.resources ?? []).map((r) => r.name).filter((n) => !n.includes('/')).sort(),
    () => [],
  );

afterAll(async () => {
  for (const p of plurals) await crds.delete(undefined, `${p}.${group}`).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  await rest.close();
});

describe('installCrds', () => {
  it('returns once discovery lists every CRD in every version it serves, and then in no version it stopped serving', async () => {
    for (const p of plurals) writeFileSync(join(dir, `${p}.yaml`), dump(crd(p, ['v1alpha1', 'v1beta1'])));
    await installCrds(rest, dir);
    expect(await discovered('v1alpha1')).toEqual([...plurals].sort());
    expect(await discovered('v1beta1')).toEqual([...plurals].sort());

    // As OpenKruise v1.9's CRR CRD: one kind goes back to v1beta1 alone (same storage version).
    writeFileSync(join(dir, 'widgets.yaml'), dump(crd('widgets', ['v1beta1'])));
    await installCrds(rest, dir);
    expect(await discovered('v1alpha1')).toEqual(['gadgets', 'sprockets']);
    expect(await discovered('v1beta1')).toEqual([...plurals].sort());
  });
});
