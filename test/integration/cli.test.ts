import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Pod } from '../../api/types/core.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient, kruise } from '../helpers/kube.js';

// The built kruise-ts CLI against the real API server, with the installation the global setup runs.
const env = clusterEnv();
const rest = restClient();
const jobs = new Resource<ImagePullJob & KubeObject>(rest, kruise.imagePullJobs);
const pods = new Resource<Pod & KubeObject>(rest, core.pods);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'cli');
});
afterAll(() => deleteNamespace(rest, ns));

function cli(args: string[], timeoutMs = 120_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js'), '--kubeconfig', env.kubeconfig, ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const job = (name: string, image: string): ImagePullJob & KubeObject => ({
  metadata: { name, namespace: ns },
  spec: { image, selector: { names: env.nodes.map((n) => n.name) }, parallelism: 2, completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 30, backoffLimit: 0 } },
});

describe('kruise-ts CLI', () => {
  it('prints usage, version, and refuses unknown commands', async () => {
    expect((await cli(['--help'])).out).toContain('kruise-ts watch imagepulljob NAME');
    expect((await cli(['--version'])).out).toMatch(/^kruise-ts \d+\.\d+\.\d+/);
    const bad = await cli(['frobnicate']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('unknown command "frobnicate"');
  });

  it('watch imagepulljob shows per-node progress and exits 0 when the job succeeds', async () => {
    await jobs.create(job('ok', `${env.registryOpen}/many-090:1.0`));
    const r = await cli(['watch', 'imagepulljob', 'ok', '-n', ns]);
    if (r.code !== 0) console.error(`watch imagepulljob ok exited ${r.code}:\n${r.out}\n${r.err}`);
    expect(r.code).toBe(0);
    for (const n of env.nodes) expect(r.out).toMatch(new RegExp(`${n.name}\\s+\\[#{20}\\] 100% Succeeded`));
    expect(r.out).toContain('job succeeded');
  });

  it('watch imagepulljob exits 1 when the job fails, naming the nodes', async () => {
    await jobs.create(job('bad', `${env.registryOpen}/does-not-exist:1.0`));
    const r = await cli(['watch', 'imagepulljob', 'bad', '-n', ns]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('job failed on:');
    expect(r.out).toMatch(/Failed: image not found in the registry/);
  });

  it('status lists jobs and recreate requests', async () => {
    await eventually(async () => {
      const r = await cli(['status', '-n', ns]);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/ok\s+\S+many-090:1.0\s+2\s+0\s+2\s+0\s+100%\s+succeeded/);
      expect(r.out).toContain('CONTAINERRECREATEREQUESTS');
    });
    expect((await cli(['status', '-A'])).out).toContain(ns);
  });

  it('watch reports a missing object and exits 1', async () => {
    const r = await cli(['watch', 'crr', 'nope', '-n', ns]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`ContainerRecreateRequest ${ns}/nope not found`);
  });

  it('watch crr follows a recreate to success', async () => {
    const node = env.nodes[0]?.name ?? '';
    await pods.create({
      metadata: { name: 'target', namespace: ns },
      spec: { nodeName: node, hostNetwork: true, terminationGracePeriodSeconds: 1, containers: [{ name: 'app', image: `${env.registryOpen}/busybox:1.0`, command: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'] }] },
    });
    await eventually(async () => expect((await pods.get(ns, 'target')).status?.containerStatuses?.[0]?.state?.running).toBeTruthy(), 60_000);
    await new Resource<KubeObject & { spec?: unknown }>(rest, kruise.crrs).create({ metadata: { name: 'restart', namespace: ns }, spec: { podName: 'target', containers: [{ name: 'app' }] } });
    const r = await cli(['watch', 'crr', 'restart', '-n', ns]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Completed: app=Succeeded');
  });
});
