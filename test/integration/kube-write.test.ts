import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import { createIfMissing, deleteIfExists, updateWithRetry } from '../../kube/write.js';
import { createNamespace, deleteNamespace, restClient } from '../helpers/kube.js';

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

  it('create/delete helpers treat AlreadyExists and NotFound as done, and merge patches apply', async () => {
    expect(await createIfMissing(cms, { metadata: { name: 'once', namespace: ns } })).toBe(true);
    expect(await createIfMissing(cms, { metadata: { name: 'once', namespace: ns } })).toBe(false);
    const patched = await cms.patch(ns, 'once', { data: { k: 'v' } });
    expect(patched.data).toEqual({ k: 'v' });
    expect(await deleteIfExists(cms, ns, 'once')).toBe(true);
    expect(await deleteIfExists(cms, ns, 'once')).toBe(false);
  });

  it('delete with a UID precondition does not remove a newer object of the same name', async () => {
    const old = await cms.create({ metadata: { name: 'reborn', namespace: ns } });
    await cms.delete(ns, 'reborn');
    await cms.create({ metadata: { name: 'reborn', namespace: ns } });
    expect(await deleteIfExists(cms, ns, 'reborn', old.metadata?.uid)).toBe(false);
    expect((await cms.get(ns, 'reborn')).metadata?.uid).not.toBe(old.metadata?.uid);
  });
});
