import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  API_VERSION_V1ALPHA1,
  API_VERSION_V1BETA1,
  crrToV1alpha1,
  crrToV1beta1,
  unreadyAcquiredAt,
  type ContainerRecreateRequest,
} from '../../api/index.js';

const spec = { podName: 'web-0', containers: [{ name: 'app' }] };
const snapshot = [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://b2' }];
const at = '2024-05-01T10:00:05Z';

const alpha = (annotations: Record<string, string>): ContainerRecreateRequest => ({
  apiVersion: API_VERSION_V1ALPHA1,
  kind: 'ContainerRecreateRequest',
  metadata: { name: 'r', namespace: 'ns', annotations },
  spec,
  status: { phase: 'Recreating' },
});

describe('ContainerRecreateRequest conversion', () => {
  it('moves the snapshot and the unready moment from v1alpha1 annotations into the v1beta1 status', () => {
    const beta = crrToV1beta1(alpha({ [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(snapshot), [ANNOTATION_CRR_UNREADY_ACQUIRED]: at }));
    expect(beta.apiVersion).toBe(API_VERSION_V1BETA1);
    expect(beta.status?.containerStatusSnapshot).toEqual(snapshot);
    expect(beta.status?.conditions).toEqual([
      { type: 'PodUnreadyAcquired', status: 'True', lastTransitionTime: at, reason: 'UnreadyAcquired', message: 'Pod has been forced to not-ready for unreadyGracePeriodSeconds drain' },
    ]);
    expect(unreadyAcquiredAt(beta)).toBe(at);
    expect(beta.spec).toEqual(spec);
  });

  it('writes both back into v1alpha1 annotations, so either version tells the same (upstream drops the unready moment)', () => {
    const beta = crrToV1beta1(alpha({ [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(snapshot), [ANNOTATION_CRR_UNREADY_ACQUIRED]: at, other: 'x' }));
    const back = crrToV1alpha1({ ...beta, metadata: { name: 'r', namespace: 'ns', annotations: { other: 'x' } } });
    expect(back.apiVersion).toBe(API_VERSION_V1ALPHA1);
    expect(back.metadata?.annotations).toEqual({ other: 'x', [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(snapshot), [ANNOTATION_CRR_UNREADY_ACQUIRED]: at });
    expect(back.status).toEqual({ phase: 'Recreating' });
  });

  it('round-trips v1beta1 → v1alpha1 → v1beta1 without loss', () => {
    const beta: ContainerRecreateRequest = {
      apiVersion: API_VERSION_V1BETA1,
      metadata: { name: 'r', namespace: 'ns' },
      spec,
      status: { phase: 'Recreating', containerStatusSnapshot: snapshot, conditions: [{ type: 'PodUnreadyAcquired', status: 'True', lastTransitionTime: at, reason: 'UnreadyAcquired', message: 'm' }] },
    };
    const again = crrToV1beta1(crrToV1alpha1(beta));
    expect(again.status?.containerStatusSnapshot).toEqual(snapshot);
    expect(unreadyAcquiredAt(again)).toBe(at);
  });

  it('ignores unreadable annotations and objects the daemon has not started', () => {
    expect(crrToV1beta1(alpha({ [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: '{not json', [ANNOTATION_CRR_UNREADY_ACQUIRED]: 'yesterday' })).status).toEqual({ phase: 'Recreating' });
    const { status: _status, ...unstarted } = alpha({ [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES]: JSON.stringify(snapshot) });
    expect(crrToV1beta1(unstarted).status).toBeUndefined();
    expect(crrToV1alpha1({ apiVersion: API_VERSION_V1BETA1, metadata: { name: 'r' }, spec }).metadata).toEqual({ name: 'r' });
  });
});
