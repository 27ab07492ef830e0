import type { Secret } from '../../api/types/core.js';
import { copyName, desiredCopy, referencesOf, releasedCopy, sourceKeyOf } from '../../manager/imagepulljob/secrets.js';

const source: Secret = {
  metadata: { name: 'regcred', namespace: 'team', uid: 'src', resourceVersion: '5' },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': 'e30=' },
};
const refs = 'imagepulljobs.kruise.io/references';

describe('pull secret copies', () => {
  it('names the copy after its source, the same every time, a valid name even for long sources', () => {
    expect(copyName('team', 'regcred')).toBe(copyName('team', 'regcred'));
    expect(copyName('team', 'regcred')).toMatch(/^regcred-[0-9a-f]{10}$/);
    expect(copyName('other', 'regcred')).not.toBe(copyName('team', 'regcred'));
    const long = copyName('team', `${'a'.repeat(241)}.b`);
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).toMatch(/^a+-[0-9a-f]{10}$/);
  });
  it('creates a copy with the source data and type, listing the job', () => {
    expect(desiredCopy(source, undefined, 'team/j1', 'cfg')).toEqual({
      metadata: {
        name: copyName('team', 'regcred'),
        namespace: 'cfg',
        annotations: { 'imagepulljobs.kruise.io/source-key': 'team/regcred', [refs]: 'team/j1', 'imagepulljobs.kruise.io/mode': 'batch' },
      },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'e30=' },
    });
  });
  it('adds a second job to the sorted references, and leaves a current copy alone', () => {
    const first = desiredCopy(source, undefined, 'team/j2', 'cfg') as Secret;
    const both = desiredCopy(source, { ...first, metadata: { ...first.metadata, resourceVersion: '9' } }, 'team/j1', 'cfg') as Secret;
    expect(both.metadata?.annotations?.[refs]).toBe('team/j1,team/j2');
    expect(both.metadata?.resourceVersion).toBe('9');
    expect(desiredCopy(source, both, 'team/j2', 'cfg')).toBeUndefined();
    expect(referencesOf(both)).toEqual(['team/j1', 'team/j2']);
    expect(sourceKeyOf(both)).toBe('team/regcred');
  });
  it('updates the data when the source changed, keeping the type', () => {
    const copy = desiredCopy(source, undefined, 'team/j1', 'cfg') as Secret;
    const changed = desiredCopy({ ...source, type: 'Opaque', data: { '.dockerconfigjson': 'bmV3' } }, copy, 'team/j1', 'cfg') as Secret;
    expect(changed.data).toEqual({ '.dockerconfigjson': 'bmV3' });
    expect(changed.type).toBe('kubernetes.io/dockerconfigjson');
  });
  it('releases a job: deleted with the last one, untouched if it was not listed', () => {
    const two = desiredCopy(source, desiredCopy(source, undefined, 'team/j1', 'cfg'), 'team/j2', 'cfg') as Secret;
    const one = releasedCopy(two, 'team/j1');
    expect(one).not.toBe('delete');
    expect(referencesOf(one as Secret)).toEqual(['team/j2']);
    expect(releasedCopy(one as Secret, 'team/j2')).toBe('delete');
    expect(releasedCopy(one as Secret, 'team/other')).toBeUndefined();
  });
});
