import type { ImageTagSpec, NodeImage } from '../../api/types/nodeimage.js';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { patchNodeImageSpec } from '../../manager/imagepulljob/nodeimagewrite.js';
import { nodeImages } from '../helpers/daemon.js';
import { clusterEnv, restClient } from '../helpers/kube.js';

// The manager's guarded NodeImage spec patch against the real API server: what its guards let
// through and what they stop, counted by the requests it made.
const calls: string[] = [];
const rest = restClient(undefined, { observe: (verb, _resource, code) => calls.push(`${verb} ${code}`) });
const nis = nodeImages(rest);
const created: string[] = [];
let seq = 0;

afterAll(async () => {
  for (const n of created) await nis.delete(undefined, n).catch(() => undefined);
});

const createdAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const tag = (t: string): ImageTagSpec => ({ tag: t, version: 0, createdAt, pullPolicy: { ttlSecondsAfterFinished: 3600 } });
async function fake(spec?: NodeImage['spec']): Promise<NodeImage> {
  const name = `${clusterEnv().envName}-patch-${Date.now().toString(36)}-${seq++}`;
  created.push(name);
  return nis.create({ metadata: { name, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, ...(spec ? { spec } : {}) });
}
/** Adds tag t of image to the copy it is given. */
const adding =
  (image: string, t: string) =>
  (ni: NodeImage): NodeImage => {
    const images = { ...ni.spec?.images };
    images[image] = { ...images[image], tags: [...(images[image]?.tags ?? []), tag(t)] };
    return { ...ni, spec: { ...ni.spec, images } };
  };
const tagsOf = (ni: NodeImage | undefined, image: string): string[] => (ni?.spec?.images?.[image]?.tags ?? []).map((x) => x.tag).sort();
function counted<R>(f: () => Promise<R>): Promise<{ result: R; calls: string[] }> {
  calls.length = 0;
  return f().then((result) => ({ result, calls: [...calls] }));
}

describe('patchNodeImageSpec on the real API server', () => {
  it("writes over a copy older than its daemon's status write without a conflict or a read", async () => {
    const base = await fake({ images: { 'registry.local/a': { tags: [tag('1')] } } });
    await nis.updateStatus({ ...base, status: { desired: 1 } });
    const { result, calls: made } = await counted(() => patchNodeImageSpec(nis, base.metadata?.name ?? '', adding('registry.local/b', '1'), base));
    expect(made).toEqual(['patch 200']);
    expect(tagsOf(result, 'registry.local/a')).toEqual(['1']);
    expect(tagsOf(result, 'registry.local/b')).toEqual(['1']);
    expect(result?.status).toEqual({ desired: 1 });
  });

  it('re-reads and re-applies when another writer changed the same image first', async () => {
    const base = await fake({ images: { 'registry.local/a': { tags: [tag('1')] } } });
    const name = base.metadata?.name ?? '';
    await patchNodeImageSpec(nis, name, adding('registry.local/a', '2'), undefined);
    const { result, calls: made } = await counted(() => patchNodeImageSpec(nis, name, adding('registry.local/a', '3'), base));
    expect(made).toEqual(['patch 422', 'get 200', 'patch 200']);
    expect(tagsOf(result, 'registry.local/a')).toEqual(['1', '2', '3']);
  });

  it('does not add over an image another writer added first (the absence guard holds on the server)', async () => {
    const base = await fake({ images: {} });
    const name = base.metadata?.name ?? '';
    await patchNodeImageSpec(nis, name, adding('registry.local/c', 'x'), base);
    const { result, calls: made } = await counted(() => patchNodeImageSpec(nis, name, adding('registry.local/c', 'y'), base));
    expect(made).toEqual(['patch 422', 'get 200', 'patch 200']);
    expect(tagsOf(result, 'registry.local/c')).toEqual(['x', 'y']);
  });

  it('lets writers of different images through at once from one stale copy, none retried', async () => {
    const base = await fake({ images: { 'registry.local/a': { tags: [tag('1')] } } });
    const name = base.metadata?.name ?? '';
    const images = Array.from({ length: 12 }, (_, i) => `registry.local/w${i}`);
    const { calls: made } = await counted(() => Promise.all(images.map((image) => patchNodeImageSpec(nis, name, adding(image, '1'), base))));
    expect(made).toEqual(images.map(() => 'patch 200'));
    const now = await nis.get(undefined, name);
    expect(Object.keys(now.spec?.images ?? {}).sort()).toEqual(['registry.local/a', ...images].sort());
  });

  it('gives up at once on a tag the admission refuses (only a failed guard is retried)', async () => {
    const base = await fake({ images: {} });
    const bad = (ni: NodeImage): NodeImage => ({ ...ni, spec: { images: { 'registry.local/a': { tags: [{ tag: '1', version: 0 }] } } } });
    calls.length = 0;
    await expect(patchNodeImageSpec(nis, base.metadata?.name ?? '', bad, base)).rejects.toThrow(/ttlSecondsAfterFinished: required/);
    expect(calls).toEqual(['patch 400']);
  });

  it('creates spec.images with a merge patch first, then adds under the guard; writers of two images both land', async () => {
    const bare = await fake();
    const name = bare.metadata?.name ?? '';
    const { result, calls: made } = await counted(() => patchNodeImageSpec(nis, name, adding('registry.local/a', '1'), bare));
    expect(made).toEqual(['patch 200', 'patch 200']);
    expect(tagsOf(result, 'registry.local/a')).toEqual(['1']);
    // Two writers from copies without the map: neither's first JSON patch races the other's map.
    const empty = await fake({});
    await Promise.all(['registry.local/x', 'registry.local/y'].map((image) => patchNodeImageSpec(nis, empty.metadata?.name ?? '', adding(image, '1'), empty)));
    const now = await nis.get(undefined, empty.metadata?.name ?? '');
    expect(Object.keys(now.spec?.images ?? {}).sort()).toEqual(['registry.local/x', 'registry.local/y']);
  });
});
