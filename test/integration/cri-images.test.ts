import { CriClient } from '../../daemon/cri/client.js';
import { CriError, definiteRegistryAnswer } from '../../daemon/cri/errors.js';
import { parseReference, pullString } from '../../api/image-reference.js';
import { registryDigest, testEnv } from '../helpers/env.js';

// Image IDs here are not shared with other suites (RemoveImage deletes every tag of an image ID).
const env = testEnv();
const cri = new CriClient(env.criSocket);
afterAll(() => cri.close());

async function pullError(image: string, auth?: { username: string; password: string }): Promise<CriError> {
  try {
    await cri.pullImage(image, auth, undefined, { timeoutMs: 60_000 });
  } catch (err) {
    if (err instanceof CriError) return err;
    throw err;
  }
  throw new Error(`pull of ${image} unexpectedly succeeded`);
}

describe('CRI image service on real containerd', () => {
  it('answers Version with API v1', async () => {
    const v = await cri.runtime('Version', { version: 'v1' });
    expect(v.runtime_name).toBe('containerd');
    expect(v.runtime_api_version).toBe('v1');
  });

  it('pulls anonymously, then ImageStatus and ListImages see it, RemoveImage removes it', async () => {
    const image = `${env.registryOpen}/many-001:1.0`;
    await cri.image('RemoveImage', { image: { image } });
    const ref = await cri.pullImage(image, undefined, undefined);
    expect(ref).toMatch(/^sha256:[a-f0-9]{64}$/);
    const st = await cri.image('ImageStatus', { image: { image } });
    expect(st.image?.id).toBe(ref);
    expect(st.image?.repo_tags).toContain(image);
    expect(Number(st.image?.size)).toBeGreaterThan(1_000_000);
    const list = await cri.image('ListImages', {});
    expect(list.images.some((i) => i.id === ref && i.repo_tags.includes(image))).toBe(true);
    await cri.image('RemoveImage', { image: { image } });
    const gone = await cri.image('ImageStatus', { image: { image } });
    expect(gone.image).toBeNull();
  });

  it('pulls a private image with credentials (username/password and base64 auth)', async () => {
    const image = `${env.registryAuth}/private/busybox:1.0`;
    await cri.image('RemoveImage', { image: { image } });
    await cri.pullImage(image, { username: env.registryUser, password: env.registryPassword }, undefined);
    await cri.image('RemoveImage', { image: { image } });
    const auth = Buffer.from(`${env.registryUser}:${env.registryPassword}`).toString('base64');
    await cri.pullImage(image, { auth }, undefined);
    expect((await cri.image('ImageStatus', { image: { image } })).image?.repo_tags).toContain(image);
  });

  it('classifies a private pull without or with a wrong password as unauthorized', async () => {
    const image = `${env.registryAuth}/private/busybox:1.0`;
    await cri.image('RemoveImage', { image: { image } });
    const anon = await pullError(image);
    expect(anon.kind).toBe('unauthorized');
    const wrong = await pullError(image, { username: env.registryUser, password: 'wrong' });
    expect(wrong.kind).toBe('unauthorized');
    expect(definiteRegistryAnswer(wrong)).toBe(true);
  });

  it('classifies a missing tag as not-found', async () => {
    const err = await pullError(`${env.registryOpen}/busybox:does-not-exist`);
    expect(err.kind).toBe('not-found');
    expect(definiteRegistryAnswer(err)).toBe(true);
  });

  it('classifies an unreachable registry as registry-unreachable', async () => {
    const err = await pullError('127.0.0.1:1/busybox:1.0');
    expect(err.kind).toBe('registry-unreachable');
    expect(definiteRegistryAnswer(err)).toBe(false);
  });

  it('pulls by digest and by tag@digest, and the digest shows in repo_digests', async () => {
    const digest = await registryDigest(env.registryOpen, 'many-002', '1.0');
    const byDigest = `${env.registryOpen}/many-002@${digest}`;
    await cri.image('RemoveImage', { image: { image: byDigest } });
    const id = await cri.pullImage(byDigest, undefined, undefined);
    const st = await cri.image('ImageStatus', { image: { image: byDigest } });
    expect(st.image?.id).toBe(id);
    expect(st.image?.repo_digests).toContain(byDigest);
    await cri.image('RemoveImage', { image: { image: byDigest } });
    const tagged = pullString(parseReference(`${env.registryOpen}/many-002:1.0@${digest}`));
    expect(tagged).toBe(byDigest);
    expect(await cri.pullImage(tagged, undefined, undefined)).toBe(id);
  });

  it('enforces a client deadline on PullImage', async () => {
    const image = `${env.registryOpen}/big:1.0`;
    await cri.image('RemoveImage', { image: { image } });
    const err = await cri.pullImage(image, undefined, undefined, { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CriError);
    expect((err as CriError).kind).toBe('deadline');
  });

  it('reports the image filesystem', async () => {
    // containerd refreshes snapshot usage on a ~10 s timer, so a fresh runtime reports 0 at first.
    let used = 0;
    for (let i = 0; i < 40 && used === 0; i++) {
      const fs = await cri.image('ImageFsInfo', {});
      expect(fs.image_filesystems[0]?.fs_id?.mountpoint).toContain(env.containerdDir);
      used = Number(fs.image_filesystems[0]?.used_bytes?.value);
      if (used === 0) await new Promise((r) => setTimeout(r, 500));
    }
    expect(used).toBeGreaterThan(0);
  });

  it('shows byte-level ingest progress of a large pull through the content API', async () => {
    const image = `${env.registryOpen}/big:1.0`;
    await cri.image('RemoveImage', { image: { image } });
    const seen: Array<{ offset: number; total: number }> = [];
    let done = false;
    const pull = cri.pullImage(image, undefined, undefined).finally(() => {
      done = true;
    });
    while (!done) {
      for (const s of await cri.ingests()) {
        if (s.ref.startsWith('layer-sha256:')) seen.push({ offset: Number(s.offset), total: Number(s.total) });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    await pull;
    const big = seen.filter((s) => s.total > 50_000_000);
    expect(big.length).toBeGreaterThan(0);
    expect(big.some((s) => s.offset > 0 && s.offset < s.total)).toBe(true);
  });
});
