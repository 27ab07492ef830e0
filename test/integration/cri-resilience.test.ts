import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { CriClient } from '../../daemon/cri/client.js';
import { detectRuntime, RuntimeDetectionError, wellKnownSockets } from '../../daemon/cri/endpoint.js';
import { criV1alpha2Proto } from '../../daemon/cri/proto.js';
import { testEnv } from '../helpers/env.js';
import { privateContainerd } from '../helpers/daemon.js';

const env = testEnv();

describe('CRI client resilience', () => {
  // Its own containerd: stopping and restarting the shared one would disturb suites running alongside.
  let ctrd: ReturnType<typeof privateContainerd>;
  beforeAll(() => {
    ctrd = privateContainerd('resilience');
  });
  afterAll(() => ctrd.ctl('down'));

  it('recovers by itself when containerd restarts', async () => {
    const cri = new CriClient(ctrd.socket);
    try {
      await cri.runtime('Version', { version: 'v1' });
      ctrd.ctl('stop');
      const failFast = await cri.runtime('Version', { version: 'v1' }, { waitForReady: false, timeoutMs: 1000 }).catch((e: unknown) => e);
      expect(failFast).toMatchObject({ kind: expect.stringMatching(/unavailable|deadline/) });
      // A call made while the runtime is down waits for it (up to its deadline) instead of failing.
      const pending = cri.runtime('Version', { version: 'v1' }, { timeoutMs: 30_000 });
      await new Promise((r) => setTimeout(r, 500));
      const restartedAt = Date.now();
      ctrd.ctl('start');
      const v = await pending;
      expect(v.runtime_api_version).toBe('v1');
      const recoveryMs = Date.now() - restartedAt;
      expect(recoveryMs).toBeLessThan(20_000);
      const image = `${env.registryOpen}/many-003:1.0`;
      await cri.image('RemoveImage', { image: { image } });
      await cri.pullImage(image, undefined, undefined);
    } finally {
      cri.close();
    }
  });

  it('a read-only call issued the moment containerd goes away is answered once it is back', async () => {
    const cri = new CriClient(ctrd.socket);
    try {
      await cri.runtime('Version', { version: 'v1' });
      ctrd.ctl('stop');
      const pending = cri.runtime('Version', { version: 'v1' }, { timeoutMs: 30_000 });
      ctrd.ctl('start');
      expect((await pending).runtime_api_version).toBe('v1');
    } finally {
      cri.close();
    }
  });

  it('a pull in flight when containerd stops fails as unavailable or cancelled, and a retry succeeds', async () => {
    const cri = new CriClient(ctrd.socket);
    const image = `${env.registryOpen}/big:1.0`;
    try {
      await cri.image('RemoveImage', { image: { image } });
      const pull = cri.pullImage(image, undefined, undefined).then(
        () => 'done',
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 150));
      ctrd.ctl('restart');
      const first = await pull;
      if (first !== 'done') expect(first).toMatchObject({ kind: expect.stringMatching(/unavailable|cancelled|other/) });
      await cri.pullImage(image, undefined, undefined);
      expect((await cri.image('ImageStatus', { image: { image } })).image?.repo_tags).toContain(image);
    } finally {
      cri.close();
    }
  });
});

describe('runtime socket detection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kruise-ts-detect-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the runtime under a host-root prefix and reports the rejected candidates', async () => {
    const found = await detectRuntime({
      hostRoot: '/',
      candidates: [
        { runtime: 'containerd', path: join(dir, 'missing.sock') },
        { runtime: 'containerd', path: env.criSocket },
      ],
    });
    expect(found.endpoint).toBe(`unix://${env.criSocket}`);
    expect(found.runtimeName).toBe('containerd');
    expect(found.apiVersion).toBe('v1');
    expect(found.attempts[0]).toMatchObject({ ok: false, reason: 'missing' });
  });

  it('explains every rejected socket: missing, not a socket, nothing answering', async () => {
    const file = join(dir, 'plain-file.sock');
    writeFileSync(file, '');
    const dead = join(dir, 'dead.sock');
    const srv = createServer((s) => s.destroy());
    await new Promise<void>((r) => srv.listen(dead, r));
    try {
      const err = await detectRuntime({
        candidates: [
          { runtime: 'containerd', path: join(dir, 'nope.sock') },
          { runtime: 'cri-o', path: file },
          { runtime: 'cri-dockerd', path: dead },
        ],
        timeoutMs: 1500,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RuntimeDetectionError);
      const msg = (err as Error).message;
      expect(msg).toContain(`${join(dir, 'nope.sock')}: missing`);
      expect(msg).toContain(`${file}: exists but is not a socket`);
      expect(msg).toMatch(new RegExp(`${dead}: (nothing answers|Version failed)`));
      expect(msg).toContain('--runtime-endpoint');
    } finally {
      srv.close();
    }
  });

  it('uses only an explicit endpoint when one is given', async () => {
    const found = await detectRuntime({ endpoint: `unix://${env.criSocket}` });
    expect(found.attempts).toHaveLength(1);
    await expect(detectRuntime({ endpoint: join(dir, 'absent.sock') })).rejects.toThrow(/absent.sock: missing/);
  });
});

describe('runtime socket detection at the paths runtimes use, under --host-root', () => {
  // A host root per case with the runtime's socket where that runtime puts it: a link to a real
  // containerd's socket (containerd speaks CRI v1 whatever the path; the runtime that answers is
  // what the daemon meets on such a node).
  let second: ReturnType<typeof privateContainerd>;
  const roots: string[] = [];
  beforeAll(() => {
    second = privateContainerd('detect');
  });
  afterAll(() => {
    second.ctl('down');
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  });

  function hostRoot(sockets: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'kruise-ts-hostroot-'));
    roots.push(root);
    for (const [path, target] of Object.entries(sockets)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      symlinkSync(target, join(root, path));
    }
    return root;
  }

  it.each([
    ['containerd (upstream /var/run/containerd.sock)', '/var/run/containerd.sock'],
    ['k3s', '/run/k3s/containerd/containerd.sock'],
    ['CRI-O', '/var/run/crio/crio.sock'],
    ['CRI-O (upstream /var/run/crio.sock)', '/var/run/crio.sock'],
    ['cri-dockerd', '/var/run/cri-dockerd.sock'],
    ['cri-dockerd (upstream /var/run/cri-dockerd/cri-dockerd.sock)', '/var/run/cri-dockerd/cri-dockerd.sock'],
  ])('finds %s', async (_label, path) => {
    expect(wellKnownSockets.map((c) => c.path)).toContain(path);
    const root = hostRoot({ [path]: env.criSocket });
    const found = await detectRuntime({ hostRoot: root });
    expect(found).toMatchObject({ endpoint: `unix://${join(root, path)}`, runtimeName: 'containerd', apiVersion: 'v1', alsoFound: [] });
  });

  it('with two runtimes, takes the first in order and names the other; one socket by two paths is one runtime', async () => {
    const root = hostRoot({
      '/run/containerd/containerd.sock': env.criSocket,
      '/var/run/containerd/containerd.sock': env.criSocket,
      '/var/run/crio/crio.sock': second.socket,
    });
    const found = await detectRuntime({ hostRoot: root });
    expect(found.endpoint).toBe(`unix://${join(root, '/run/containerd/containerd.sock')}`);
    expect(found.alsoFound).toEqual([expect.stringMatching(new RegExp(`^unix://${join(root, '/var/run/crio/crio.sock')} \\(containerd `))]);
  });

  it('names a runtime that speaks only CRI v1alpha2, and what to upgrade to', async () => {
    // No runtime installable here speaks only v1alpha2 (Debian's containerd 1.6 serves both), so a
    // gRPC server with containerd 1.5's answer to runtime.v1alpha2 Version stands in for one.
    const server = new grpc.Server();
    server.addService(criV1alpha2Proto().runtime.v1alpha2.RuntimeService.service, {
      Version: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { version: '0.1.0', runtime_name: 'containerd', runtime_version: 'v1.5.18', runtime_api_version: 'v1alpha2' }),
    });
    const root = hostRoot({});
    const sock = join(root, '/run/containerd/containerd.sock');
    mkdirSync(dirname(sock), { recursive: true });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())));
    try {
      const err = await detectRuntime({ hostRoot: root, timeoutMs: 1500 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RuntimeDetectionError);
      expect((err as Error).message).toContain(`${sock}: containerd v1.5.18 speaks only CRI v1alpha2; kruise-daemon needs runtime.v1`);
    } finally {
      server.forceShutdown();
    }
  });
});
