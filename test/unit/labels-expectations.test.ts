import { ResourceVersionExpectations, versionToExpect } from '../../kube/expectations.js';
import { resourceVersionAtLeast } from '../../kube/resource-version.js';
import { sameLabels, selectorMatches } from '../../kube/labels.js';

describe('label selectors', () => {
  const l = { app: 'web', tier: 'front' };
  it.each([
    [{}, true],
    [{ matchLabels: { app: 'web' } }, true],
    [{ matchLabels: { app: 'db' } }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'In', values: ['db', 'web'] }] }, true],
    [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }, false],
    [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, true],
    [{ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, false],
    [{ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'Bogus' }] }, false],
    [{ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, false],
  ])('%j matches {app: web, tier: front}: %s', (selector, want) => {
    expect(selectorMatches(selector, l)).toBe(want);
  });
  it('compares label sets', () => {
    expect(sameLabels({ a: '1' }, { a: '1' })).toBe(true);
    expect(sameLabels({ a: '1' }, { a: '2' })).toBe(false);
    expect(sameLabels(undefined, {})).toBe(true);
    expect(sameLabels({ a: '1' }, { a: '1', b: '2' })).toBe(false);
  });
});

describe('resource-version expectations', () => {
  it('compares etcd versions as integers, others only for equality', () => {
    expect(resourceVersionAtLeast('100', '99')).toBe(true);
    expect(resourceVersionAtLeast('99', '100')).toBe(false);
    expect(resourceVersionAtLeast('abc', 'abc')).toBe(true);
    expect(resourceVersionAtLeast('abd', 'abc')).toBe(false);
    expect(resourceVersionAtLeast(undefined, '1')).toBe(false);
  });
  it('is pending until the cache shows the written version, then forgets it', () => {
    let now = 0;
    const e = new ResourceVersionExpectations<string>(1000, () => now);
    e.expect('job', 'n1', '10', 'dispatch');
    expect(e.pending('job', 'n1', '9')).toEqual({ meta: 'dispatch' });
    expect(e.pending('job', 'n1', '11')).toBeUndefined();
    expect(e.pending('job', 'n1', '9')).toBeUndefined();
    e.expect('job', 'n1', '20', 'x');
    now = 1001;
    expect(e.pending('job', 'n1', '9')).toBeUndefined();
    e.expect('job', 'n2', '5', 'x');
    e.forget('job');
    expect(e.pending('job', 'n2', '1')).toBeUndefined();
    e.expect('job', 'n3', undefined, 'x');
    expect(e.pending('job', 'n3', '0')).toBeUndefined();
  });
  it('waits 5 minutes for a cache behind its own writes by default, as client-go', () => {
    let now = 0;
    const e = new ResourceVersionExpectations<string>(undefined, () => now);
    e.expect('job', 'n1', '10', 'dispatch');
    now = 299_000;
    expect(e.pending('job', 'n1', '9')).toEqual({ meta: 'dispatch' });
    now = 300_001;
    expect(e.pending('job', 'n1', '9')).toBeUndefined();
  });
  it('expects what a read-modify-write left on the server when the cache is behind it', () => {
    const at = (rv: string) => ({ metadata: { resourceVersion: rv } });
    // Written over the cached copy.
    expect(versionToExpect(at('12'), '10')).toBe('12');
    // A conflict's fresh read that needed no write: newer than the cache.
    expect(versionToExpect(at('15'), '10')).toBe('15');
    // Nothing to write on the cached copy itself: nothing to wait for.
    expect(versionToExpect(at('10'), '10')).toBeUndefined();
    // Not in the cache yet.
    expect(versionToExpect(at('3'), undefined)).toBe('3');
    expect(versionToExpect(undefined, '10')).toBeUndefined();
  });
});
