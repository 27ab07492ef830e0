import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dump, load } from 'js-yaml';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as CrdsModule from '../../kube/crds.js';
import type * as RestModule from '../../kube/rest.js';
import type * as KubeconfigModule from '../../kube/kubeconfig.js';
import type * as KruiseModule from '../../kube/kruise.js';
import type * as ResourceModule from '../../kube/resource.js';

const root = join(import.meta.dirname, '..', '..');

// Brings the real local environment up once per jest run (unless one is handed in), installs the
// project's CRDs and runs kruise-ts on it as an installation would: kruise-manager (webhook and
// controllers) and a kruise-daemon on every node, from the build.
export default async function globalSetup(): Promise<void> {
  const given = process.env['KRUISE_TS_ENV_JSON'];
  if (given) {
    if (!existsSync(given)) throw new Error(`KRUISE_TS_ENV_JSON=${given} does not exist; run hack/env-up.sh first`);
  } else {
    startEnvironment();
  }
  const env = JSON.parse(readFileSync(process.env['KRUISE_TS_ENV_JSON'] ?? '', 'utf8')) as { kubeconfig?: string };
  if (!env.kubeconfig) throw new Error('the environment has no cluster (KRUISE_TS_CLUSTER=0?); integration tests need it');
  // jest loads global setup outside its module mapper, so the project's own code comes from the build.
  const built = (rel: string): string => {
    const p = join(root, 'dist', rel);
    if (!existsSync(p)) throw new Error(`${p} is missing: run npm run build (npm test does)`);
    return pathToFileURL(p).href;
  };
  const { installCrds } = (await import(built('kube/crds.js'))) as typeof CrdsModule;
  const { RestClient } = (await import(built('kube/rest.js'))) as typeof RestModule;
  const { loadClusterAccess } = (await import(built('kube/kubeconfig.js'))) as typeof KubeconfigModule;
  const { discoverKruise } = (await import(built('kube/kruise.js'))) as typeof KruiseModule;
  const { Resource, core } = (await import(built('kube/resource.js'))) as typeof ResourceModule;
  const rest = new RestClient(loadClusterAccess(env.kubeconfig), { qps: 0 });
  try {
    if (process.env['KRUISE_TS_CRDS'] === 'openkruise-v1.9') {
      // OpenKruise v1.9 serves ContainerRecreateRequest as v1alpha1 alone: a CRD that already
      // stored v1beta1 objects cannot go back, so the test cluster starts that CRD afresh.
      const crds = new Resource<{ metadata?: { name?: string }; status?: { storedVersions?: string[] } }>(rest, core.crds);
      const crr = await crds.get(undefined, 'containerrecreaterequests.apps.kruise.io').catch(() => undefined);
      if (crr?.status?.storedVersions?.includes('v1beta1')) {
        await crds.delete(undefined, 'containerrecreaterequests.apps.kruise.io');
        for (let i = 0; i < 300 && (await crds.get(undefined, 'containerrecreaterequests.apps.kruise.io').then(() => true, () => false)); i++) await new Promise((r) => setTimeout(r, 100));
      }
      await installCrds(rest, openKruiseV19Crds());
    } else {
      await installCrds(rest, join(root, 'deploy', 'crds'));
    }
    // Suites address each kind in the version the cluster serves (test/helpers/kube.ts).
    process.env['KRUISE_TS_KRUISE_VERSIONS'] = JSON.stringify((await discoverKruise(rest)).versions);
  } finally {
    await rest.close();
  }
  // Every API call the binaries make during the run is recorded; npm test then checks deploy/'s
  // RBAC against it (hack/check-rbac.ts).
  mkdirSync(join(root, '.test-output'), { recursive: true });
  process.env['KRUISE_TS_ACCESS_LOG'] = join(root, '.test-output', 'access.jsonl');
  writeFileSync(process.env['KRUISE_TS_ACCESS_LOG'], '');
  // A run that was killed leaves its installation behind (processes, the lease, the certificate
  // Secret): this one starts as a first installation does, so its recorded calls are a first one's.
  const kruiseJs = join(root, 'dist', 'hack', 'kruise.js');
  execFileSync(process.execPath, [kruiseJs, 'down', process.env['KRUISE_TS_ENV_JSON'] ?? ''], { stdio: 'inherit' });
  execFileSync(process.execPath, [kruiseJs, 'up', process.env['KRUISE_TS_ENV_JSON'] ?? ''], { stdio: 'inherit' });
}

/**
 * deploy/crds as OpenKruise v1.9 installs them: the same NodeImage, ImagePullJob and
 * ImageListPullJob CRDs (both versions, v1beta1 stored), and ContainerRecreateRequest in
 * v1alpha1 alone, without a conversion webhook. Written to a directory of its own.
 */
function openKruiseV19Crds(): string {
  const dir = join(root, '.test-output', 'openkruise-v1.9-crds');
  mkdirSync(dir, { recursive: true });
  for (const file of readdirSync(join(root, 'deploy', 'crds')).filter((f) => f.startsWith('apps.kruise.io_'))) {
    const crd = load(readFileSync(join(root, 'deploy', 'crds', file), 'utf8')) as {
      metadata: { name: string };
      spec: { conversion?: unknown; versions: Array<{ name: string; storage: boolean }> };
    };
    if (crd.metadata.name === 'containerrecreaterequests.apps.kruise.io') {
      delete crd.spec.conversion;
      crd.spec.versions = crd.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true }));
    }
    writeFileSync(join(dir, file), dump(crd));
  }
  return dir;
}

function startEnvironment(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('integration tests start containerd and a local cluster and must run as root (or set KRUISE_TS_ENV_JSON)');
  }
  const envName = process.env['KRUISE_TS_ENV'] ?? 'test';
  execFileSync('bash', [join(root, 'hack', 'env-up.sh')], { stdio: 'inherit', env: { ...process.env, KRUISE_TS_ENV: envName } });
  process.env['KRUISE_TS_ENV_JSON'] = `/tmp/kruise-ts-${envName}/env.json`;
  process.env['KRUISE_TS_ENV_STARTED_BY_JEST'] = '1';
}
