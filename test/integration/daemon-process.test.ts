import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import type { ImageTagSpec } from '../../api/types/nodeimage.js';
import { CriClient } from '../../daemon/cri/client.js';
import { nodeImages, privateContainerd, spawnDaemon, tagStatus } from '../helpers/daemon.js';
import { clusterEnv, createNamespace, deleteNamespace, eventually, restClient } from '../helpers/kube.js';
import { logEntries } from '../helpers/logs.js';
import { scrape, sum } from '../helpers/manager.js';
import { ThrottleProxy } from '../helpers/throttle.js';

// The built kruise-daemon binary as a process: killed, restarted, stopped with SIGTERM.
const env = clusterEnv();
const rest = restClient();
const nis = nodeImages(rest);
let ns = '';
let ctrd: ReturnType<typeof privateContainerd>;
let cri: CriClient;
let slow: ThrottleProxy;
const children: Array<ReturnType<typeof spawnDaemon>> = [];
const created: string[] = [];

beforeAll(async () => {
  ns = await createNamespace(rest, 'daemonproc');
  ctrd = privateContainerd('daemonproc');
  cri = new CriClient(ctrd.socket);
  slow = await ThrottleProxy.start(env.registryOpen, 6_000_000);
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const n of created) await nis.delete(undefined, n).catch(() => undefined);
  await slow.stop();
  cri.close();
  ctrd.ctl('down');
  await deleteNamespace(rest, ns);
});

function daemon(node: string): ReturnType<typeof spawnDaemon> {
  const c = spawnDaemon(node, env.kubeconfig, ctrd.socket, ['--secret-namespace', ns]);
  children.push(c);
  return c;
}

async function port(c: ReturnType<typeof spawnDaemon>): Promise<number> {
  return eventually(() => {
    const m = /"message":"started".*?"port":(\d+)/.exec(c.output());
    if (!m) throw new Error(`daemon not started yet:\n${c.output()}`);
    return Number(m[1]);
  }, 30_000);
}

function exited(c: ReturnType<typeof spawnDaemon>): Promise<number | null> {
  return new Promise((r) => (c.exitCode !== null ? r(c.exitCode) : c.once('exit', (code) => r(code))));
}

const tag = (t: string): ImageTagSpec => ({ tag: t, version: 0, createdAt: new Date().toISOString(), imagePullPolicy: 'Always', pullPolicy: { timeoutSeconds: 120, backoffLimit: 3, ttlSecondsAfterFinished: 300 } });

async function pullingBig(node: string): Promise<string> {
  const big = `${slow.address}/big`;
  await cri.image('RemoveImage', { image: { image: `${big}:1.0` } });
  await nis.create({ metadata: { name: node, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: { images: { [big]: { tags: [tag('1.0')] } } } });
  created.push(node);
  await eventually(async () => expect(tagStatus(await nis.get(undefined, node), big, '1.0')?.phase).toBe('Pulling'), 30_000, 50);
  return big;
}

describe('kruise-daemon as a process', () => {
  it('serves /healthz, /readyz and /metrics', async () => {
    const c = daemon(`${ns}-ops`);
    const p = await port(c);
    await eventually(async () => expect((await fetch(`http://127.0.0.1:${p}/readyz`)).status).toBe(200));
    expect(await (await fetch(`http://127.0.0.1:${p}/healthz`)).text()).toBe('ok');
    const metrics = await (await fetch(`http://127.0.0.1:${p}/metrics`)).text();
    for (const m of ['kruise_daemon_image_pull_duration_seconds', 'kruise_daemon_image_pull_bytes_total', 'kruise_daemon_image_pulls_total', 'kruise_daemon_image_pulls_in_flight', 'kruise_daemon_workqueue_depth', 'kruise_daemon_events_total', 'kruise_daemon_api_requests_total', 'process_resident_memory_bytes']) {
      expect(metrics).toContain(m);
    }
    expect(metrics).toMatch(/kruise_daemon_api_requests_total\{verb="watch",resource="nodeimages",code="200"\} [1-9]/);
    c.kill('SIGTERM');
    expect(await exited(c)).toBe(0);
  });

  it('moves its metrics by what it did: one pull that succeeds, one that fails', async () => {
    const node = `${ns}-metrics`;
    const c = daemon(node);
    const p = await port(c);
    const good = `${env.registryOpen}/busybox`;
    const bad = `${env.registryOpen}/no-such-image`;
    await cri.image('RemoveImage', { image: { image: `${good}:1.1` } });
    const before = await scrape(p);
    const once = (t: string): ImageTagSpec => ({ ...tag(t), pullPolicy: { timeoutSeconds: 60, backoffLimit: 0, ttlSecondsAfterFinished: 300 } });
    await nis.create({ metadata: { name: node, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: { images: { [good]: { tags: [once('1.1')] }, [bad]: { tags: [once('1.0')] } } } });
    created.push(node);
    await eventually(async () => {
      const ni = await nis.get(undefined, node);
      expect([tagStatus(ni, good, '1.1')?.phase, tagStatus(ni, bad, '1.0')?.phase]).toEqual(['Succeeded', 'Failed']);
    }, 60_000, 200);
    const size = Number((await cri.image('ImageStatus', { image: { image: `${good}:1.1` } })).image?.size ?? 0);
    expect(size).toBeGreaterThan(0);
    // Events go out after the status write that made the phases visible.
    const after = await eventually(async () => {
      const m = await scrape(p);
      expect(sum(m, 'kruise_daemon_events_total', { result: 'created' }) - sum(before, 'kruise_daemon_events_total', { result: 'created' })).toBe(2);
      return m;
    });
    const delta = (metric: string, match: Record<string, string> = {}): number => sum(after, metric, match) - sum(before, metric, match);
    expect({
      succeeded: delta('kruise_daemon_image_pulls_total', { result: 'Succeeded' }),
      failed: delta('kruise_daemon_image_pulls_total', { result: 'Failed', reason: 'not-found' }),
      durationsSucceeded: delta('kruise_daemon_image_pull_duration_seconds_count', { result: 'Succeeded' }),
      durationsFailed: delta('kruise_daemon_image_pull_duration_seconds_count', { result: 'Failed' }),
      bytes: delta('kruise_daemon_image_pull_bytes_total'),
      inFlight: sum(after, 'kruise_daemon_image_pulls_in_flight'),
      waiting: sum(after, 'kruise_daemon_image_pulls_waiting'),
    }).toEqual({ succeeded: 1, failed: 1, durationsSucceeded: 1, durationsFailed: 1, bytes: size, inFlight: 0, waiting: 0 });
    expect(delta('kruise_daemon_image_pull_duration_seconds_sum', { result: 'Succeeded' })).toBeGreaterThan(0);
    // Every status write counted is a status update the API server answered with 200.
    const written = delta('kruise_daemon_status_writes_total', { resource: 'nodeimages/status', result: 'written' });
    expect(written).toBeGreaterThanOrEqual(1);
    expect(delta('kruise_daemon_api_requests_total', { verb: 'update', resource: 'nodeimages/status', code: '200' })).toBe(written);
    expect(delta('kruise_daemon_status_writes_total', { result: 'error' })).toBe(0);
    c.kill('SIGTERM');
    expect(await exited(c)).toBe(0);
  });

  it('resumes a pull after being killed mid-pull and restarted', async () => {
    const node = `${ns}-killed`;
    const first = daemon(node);
    const big = await pullingBig(node);
    first.kill('SIGKILL');
    await exited(first);
    expect(tagStatus(await nis.get(undefined, node), big, '1.0')?.phase).toBe('Pulling');
    daemon(node);
    await eventually(async () => expect(tagStatus(await nis.get(undefined, node), big, '1.0')).toMatchObject({ phase: 'Succeeded', progress: 100 }), 90_000, 200);
  });

  it('on SIGTERM stops within the grace period without recording a failure, and the next start finishes the pull', async () => {
    const node = `${ns}-sigterm`;
    const first = daemon(node);
    const big = await pullingBig(node);
    const t0 = Date.now();
    first.kill('SIGTERM');
    expect(await exited(first)).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(first.output()).toContain('"message":"stopped"');
    const after = tagStatus(await nis.get(undefined, node), big, '1.0');
    expect(after?.phase).not.toBe('Failed');
    daemon(node);
    await eventually(async () => expect(tagStatus(await nis.get(undefined, node), big, '1.0')?.phase).toBe('Succeeded'), 90_000, 200);
  });

  it('finds the runtime under --host-root and warns when a second one answers', async () => {
    const hostRoot = mkdtempSync(join(tmpdir(), 'kruise-ts-hostroot-'));
    try {
      const containerdAt = join(hostRoot, 'run', 'containerd', 'containerd.sock');
      const crioAt = join(hostRoot, 'var', 'run', 'crio', 'crio.sock');
      for (const [at, target] of [[containerdAt, ctrd.socket], [crioAt, env.nodes[0]?.criSocket ?? '']] as const) {
        mkdirSync(dirname(at), { recursive: true });
        symlinkSync(target, at);
      }
      const c = spawnDaemon(`${ns}-hostroot`, env.kubeconfig, undefined, ['--host-root', hostRoot, '--secret-namespace', ns]);
      children.push(c);
      await port(c);
      const lines = logEntries(c.output());
      expect(lines.find((l) => l['message'] === 'container runtime found')).toMatchObject({ endpoint: `unix://${containerdAt}` });
      expect(lines.find((l) => l['level'] === 'warn' && String(l['message']).startsWith('more than one container runtime'))).toMatchObject({
        alsoFound: [expect.stringContaining(`unix://${crioAt} (containerd `)],
      });
      c.kill('SIGTERM');
      expect(await exited(c)).toBe(0);
    } finally {
      rmSync(hostRoot, { recursive: true, force: true });
    }
  });

  it('explains a missing runtime socket and exits', async () => {
    const c = spawnDaemon(`${ns}-nosock`, env.kubeconfig, '/nonexistent/containerd.sock');
    expect(await exited(c)).toBe(1);
    expect(c.output()).toContain('/nonexistent/containerd.sock: missing');
    expect(c.output()).toContain('--runtime-endpoint');
  });
});
