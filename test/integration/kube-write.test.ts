import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { createIfMissing, deleteIfExists, updateWithRetry } from '../../kube/write.js';
import { createNamespace, deleteNamespace, restClient } from '../helpers/kube.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { kruise } from '../../kube/kruise.js';
import { LABEL_FAKE_NODE_IMAGE } from '../../api/metadata-keys.js';
import { nodeImageSpecPatch } from '../../manager/nodeimage/spec-patch.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}
const rest = restClient();
const cms = new Resource<ConfigMap>(rest, core.configmaps);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'write');
});
afterAll(() => deleteNamespace(rest, ns));

/** The NodeImage requests made through `nis`, as "verb code". */
const calls: string[] = [];
const nis = new Resource<NodeImage>(
  restClient(undefined, { observe: (verb, resource, code) => void (resource === 'nodeimages' && calls.push(`${verb} ${code}`)) }),
  kruise.nodeImages,
);
const NI = 'kube-write-guarded';
const createdAt = '2026-12-06T10:00:00Z';
const spec = (...images: string[]): NonNullable<NodeImage['spec']> => ({ images: Object.fromEntries(images.map((i) => [i, { tags: [{ tag: '1', createdAt, version: 0, pullPolicy: { ttlSecondsAfterFinished: 300, timeoutSeconds: 60, backoffLimit: 1 } }] }])) });
const addImage =
  (image: string) =>
  (cur: NodeImage): NodeImage => ({ ...cur, spec: { images: { ...cur.spec?.images, ...spec(image).images } } });
afterEach(() => deleteIfExists(nis, undefined, NI));

/** A NodeImage holding image a, as the manager's cache saw it, and the same after its daemon reported on a. */
async function withStatusWritten(): Promise<{ cached: NodeImage; now: NodeImage }> {
  // No Node has this name: the label keeps the NodeImage controller from deleting it.
  const cached = await nis.create({ metadata: { name: NI, labels: { [LABEL_FAKE_NODE_IMAGE]: 'true' } }, spec: spec('a') });
  // The manager's NodeImage controller may write this status too (it sees the NodeImage as well).
  const status = { desired: 1, imageStatuses: { a: { tags: [{ tag: '1', phase: 'Pulling' as const, version: 0 }] } } };
  const now = await updateWithRetry(nis, undefined, NI, (cur) => ({ ...cur, status }), { status: true, initial: cached });
  if (!now) throw new Error(`${NI} is gone`);
  return { cached, now };
}

describe('write helpers on the real API server', () => {
  it('a stale copy gets 409 Conflict from a plain update', async () => {
    const cm = await cms.create({ metadata: { name: 'stale', namespace: ns }, data: { n: '0' } });
    await cms.update({ ...cm, data: { n: '1' } });
    const err = await cms.update({ ...cm, data: { n: '2' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).conflict).toBe(true);
  });

  it('updateWithRetry re-reads on conflict so concurrent writers lose nothing', async () => {
    const cm = await cms.create({ metadata: { name: 'counter', namespace: ns }, data: { n: '0' } });
    const writers = 12;
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        updateWithRetry(
          cms,
          ns,
          'counter',
          (cur) => ({ ...cur, data: { ...cur.data, n: String(Number(cur.data?.['n'] ?? 0) + 1), [`w${i}`]: 'x' } }),
          // Every writer starts from the same (soon stale) copy, as controllers reading a cache do.
          { initial: cm, attempts: 30 },
        ),
      ),
    );
    const final = await cms.get(ns, 'counter');
    expect(final.data?.['n']).toBe(String(writers));
    expect(Object.keys(final.data ?? {}).filter((k) => k.startsWith('w'))).toHaveLength(writers);
  });

  it('updateWithRetry writes nothing when the mutation changes nothing, and tolerates a missing object', async () => {
    const cm = await cms.create({ metadata: { name: 'noop', namespace: ns }, data: { a: '1' } });
    const out = await updateWithRetry(cms, ns, 'noop', () => undefined);
    expect(out?.metadata?.resourceVersion).toBe(cm.metadata?.resourceVersion);
    expect(await updateWithRetry(cms, ns, 'absent', (c) => c)).toBeUndefined();
  });

  it("a bare 404, the server's answer for a path it does not serve (yet), is not a missing object: the helpers fail rather than report it gone", async () => {
    // A restarting kube-apiserver answers so for custom resources until it has read their CRDs; an
    // unserved plural of the group gets the same answer from this one at any time.
    const unserved = new Resource<KubeObject>(rest, { group: 'apps.kruise.io', version: 'v1beta1', plural: 'kruisetsunserved', kind: 'KruiseTsUnserved', namespaced: false });
    const bare = await unserved.get(undefined, 'x').catch((e: unknown) => e);
    expect(bare).toBeInstanceOf(ApiError);
    expect({ notFound: (bare as ApiError).notFound, objectNotFound: (bare as ApiError).objectNotFound }).toEqual({ notFound: true, objectNotFound: false });
    // What a log line shows an operator: the HTTP reason, as no Status came.
    expect((bare as ApiError).message).toBe('get /apis/apps.kruise.io/v1beta1/kruisetsunserved/x: HTTP 404 Not Found: 404 page not found');
    await expect(updateWithRetry(unserved, undefined, 'x', (c) => c)).rejects.toMatchObject({ status: 404, objectNotFound: false });
    await expect(deleteIfExists(unserved, undefined, 'x')).rejects.toMatchObject({ status: 404, objectNotFound: false });
    const missing = await cms.get(ns, 'absent').catch((e: unknown) => e);
    expect((missing as ApiError).objectNotFound).toBe(true);
  });

  it('create/delete helpers treat AlreadyExists and NotFound as done, and merge patches apply', async () => {
    expect(await createIfMissing(cms, { metadata: { name: 'once', namespace: ns } })).toBe(true);
    expect(await createIfMissing(cms, { metadata: { name: 'once', namespace: ns } })).toBe(false);
    const patched = await cms.patch(ns, 'once', { data: { k: 'v' } });
    expect(patched.data).toEqual({ k: 'v' });
    expect(await deleteIfExists(cms, ns, 'once')).toBe(true);
    expect(await deleteIfExists(cms, ns, 'once')).toBe(false);
  });

  it("a guarded spec patch is not refused for the daemon's status write its copy missed (a PUT is: 409)", async () => {
    const { cached, now } = await withStatusWritten();
    const err = await updateWithRetry(nis, undefined, NI, addImage('b'), { initial: cached, attempts: 1 }).catch((e: unknown) => e);
    expect((err as ApiError).conflict).toBe(true);
    const written = await updateWithRetry(nis, undefined, NI, addImage('b'), { initial: cached, attempts: 1, asPatch: nodeImageSpecPatch });
    expect(Object.keys(written?.spec?.images ?? {})).toEqual(['a', 'b']);
    expect(written?.status?.imageStatuses?.['a']?.tags?.[0]?.phase).toBe('Pulling');
    expect(written?.metadata?.generation).toBe((now.metadata?.generation ?? 0) + 1);
  });

  it('a guarded spec patch whose tests no longer hold re-reads and applies its change to what the server holds', async () => {
    const { cached, now } = await withStatusWritten();
    await nis.update({ ...now, spec: { images: { ...now.spec?.images, ...spec('c').images } } });
    // Built on a copy from before c: a patch of the whole spec applied blindly would drop c.
    calls.length = 0;
    const written = await updateWithRetry(nis, undefined, NI, addImage('b'), { initial: cached, attempts: 2, asPatch: nodeImageSpecPatch });
    expect(Object.keys(written?.spec?.images ?? {}).sort()).toEqual(['a', 'b', 'c']);
    expect(calls).toEqual(['patch 422', 'get 200', 'patch 200']);
  });

  it('a guarded spec patch the server refuses whatever the version fails at once with its 422', async () => {
    const { now } = await withStatusWritten();
    const invalid = (cur: NodeImage): NodeImage => ({ ...cur, spec: { images: { ...cur.spec?.images, d: { tags: [{ createdAt } as never] } } } });
    calls.length = 0;
    const err = await updateWithRetry(nis, undefined, NI, invalid, { initial: now, attempts: 8, asPatch: nodeImageSpecPatch }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    // One read tells the refused change from a moved object: no second try.
    expect(calls).toEqual(['patch 422', 'get 200']);
    expect((await nis.get(undefined, NI)).metadata?.resourceVersion).toBe(now.metadata?.resourceVersion);
  });

  it('delete with a UID precondition does not remove a newer object of the same name', async () => {
    const old = await cms.create({ metadata: { name: 'reborn', namespace: ns } });
    await cms.delete(ns, 'reborn');
    await cms.create({ metadata: { name: 'reborn', namespace: ns } });
    expect(await deleteIfExists(cms, ns, 'reborn', old.metadata?.uid)).toBe(false);
    expect((await cms.get(ns, 'reborn')).metadata?.uid).not.toBe(old.metadata?.uid);
  });
});
