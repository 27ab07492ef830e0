import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriClient } from '../../daemon/cri/client.js';
import { detectRuntime, RuntimeDetectionError } from '../../daemon/cri/endpoint.js';
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
