import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { MESSAGE_PROGRESS_UNKNOWN } from '../../api/messages.js';
import { bar } from '../../cli/format.js';
import { jobNodeProgress, jobPercent } from '../../cli/progress.js';

const job: ImagePullJob = { metadata: { name: 'j', namespace: 'ns', uid: 'u1' }, spec: { image: 'reg/app:1.0', completionPolicy: { type: 'Always' } }, status: { desired: 4, active: 3, succeeded: 1, failed: 0 } };

function ni(name: string, status?: { phase: 'Waiting' | 'Pulling' | 'Succeeded' | 'Failed'; progress?: number; message?: string }): NodeImage {
  return {
    metadata: { name },
    spec: { images: { 'reg/app': { tags: [{ tag: '1.0', version: 0, ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'ImagePullJob', name: 'j', namespace: 'ns', uid: 'u1' }] }] } } },
    ...(status ? { status: { desired: 1, imageStatuses: { 'reg/app': { tags: [{ tag: '1.0', version: 0, ...status }] } } } } : {}),
  };
}

describe('CLI job progress', () => {
  it('is the share of bytes across nodes: finished nodes in full, pulling nodes by their bytes, nodes not reached yet as nothing', () => {
    const nodes = jobNodeProgress(job, [ni('a', { phase: 'Succeeded', progress: 100 }), ni('b', { phase: 'Pulling', progress: 50 }), ni('c', { phase: 'Pulling', progress: 30 })]);
    expect(nodes.map((n) => [n.node, n.progress])).toEqual([
      ['a', 100],
      ['b', 50],
      ['c', 30],
    ]);
    // (100 + 50 + 30 + 0) / 4 desired; upstream's count of finished nodes says 25 %.
    expect(jobPercent(job, nodes)).toBe(45);
  });

  it('shows a node whose progress the daemon cannot know as unknown, not 0 %', () => {
    const [n] = jobNodeProgress(job, [ni('a', { phase: 'Pulling', progress: 0, message: `${MESSAGE_PROGRESS_UNKNOWN}: cannot connect to registry reg (https): ENOTFOUND` })]);
    expect(n?.progress).toBeUndefined();
    expect(bar(n?.progress)).toBe('[....................]    ?');
    expect(bar(45)).toBe('[#########...........]  45%');
    // Failed counts as finished: a job whose nodes all ended is at 100 %.
    expect(jobPercent({ ...job, status: { desired: 1 } }, jobNodeProgress(job, [ni('a', { phase: 'Failed', progress: 10 })]))).toBe(100);
  });
});
