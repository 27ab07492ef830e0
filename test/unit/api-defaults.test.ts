import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
  ANNOTATION_PREDOWNLOAD_PARALLELISM,
  ANNOTATION_PREDOWNLOAD_TIMEOUT_SECONDS,
  ANNOTATION_PULLING_IMAGE_BY,
  ANNOTATION_SECRET_MODE,
  ANNOTATION_SECRET_REFERENCES,
  ANNOTATION_SECRET_SOURCE_KEY,
  API_VERSION_V1ALPHA1,
  API_VERSION_V1BETA1,
  CONDITION_KRUISE_POD_READY,
  DEFAULT_DAEMON_CONFIG_NAMESPACE,
  DEFAULT_KRUISE_NAMESPACE,
  FINALIZER_CRR_UNREADY_ACQUIRED,
  FINALIZER_DELETION_PROTECTION,
  KIND_IMAGE_LIST_PULL_JOB,
  KIND_IMAGE_PULL_JOB,
  KIND_NODE_IMAGE,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_UID,
  LABEL_FAKE_NODE_IMAGE,
  LABEL_IMAGE_PREDOWNLOAD_IGNORED,
  LABEL_PRE_PREDOWNLOAD_CREATED,
  LABEL_SECRET_SOURCE_UID,
  MESSAGE_CRR_DAEMON_NOT_RESPONDED,
  MESSAGE_CRR_DEADLINE_EXCEEDED,
  MESSAGE_CRR_POD_GONE,
  MESSAGE_JOB_COMPLETED,
  MESSAGE_JOB_DEADLINE_EXCEEDED,
  MESSAGE_NODE_NOT_RESPONDED,
  MESSAGE_PULL_DEADLINE_EXCEEDED,
  REASON_CREATED_IMAGE_PULL_JOB,
  REASON_FAILED_CREATE_IMAGE_PULL_JOB,
  REASON_FAILED_PRE_STOP_HOOK,
  REASON_KILLING,
  REASON_PULL_IMAGE_FAILED,
  REASON_PULL_IMAGE_SUCCEED,
  defaultImageListPullJob,
  defaultImagePullJob,
  defaultNodeImage,
  formatTime,
  isRfc3339,
  jsonEqual,
  jobProgressMessage,
  killingEventMessage,
  pullImageSucceededEventMessage,
  sortByTag,
} from '../../api/index.js';
import type { ImageListPullJob, ImagePullJob, NodeImage } from '../../api/index.js';

const now = new Date('2024-05-01T10:00:00.123Z');

describe('NodeImage defaults', () => {
  const input: NodeImage = {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_NODE_IMAGE,
    metadata: { name: 'node-a' },
    spec: {
      images: {
        nginx: {
          pullSecrets: [{ namespace: 'kruise-ts-daemon-config', name: 'cred' }],
          tags: [
            { tag: 'b', pullPolicy: { ttlSecondsAfterFinished: 60 } },
            {
              tag: 'a',
              createdAt: '2024-04-01T00:00:00Z',
              pullPolicy: { timeoutSeconds: 30, backoffLimit: 0, ttlSecondsAfterFinished: 1 },
            },
            { tag: 'B', pullPolicy: null as never },
          ],
        },
      },
    },
    status: {
      desired: 3,
      imageStatuses: { nginx: { tags: [{ tag: 'b', phase: 'Pulling' }, { tag: 'a', phase: 'Succeeded' }] } },
    },
  };
  const before = structuredClone(input);
  const out = defaultNodeImage(input, now);
  const tags = out.spec?.images?.nginx?.tags ?? [];

  it('sorts spec and status tags in byte order', () => {
    expect(tags.map((t) => t.tag)).toEqual(['B', 'a', 'b']);
    expect(out.status?.imageStatuses?.nginx?.tags.map((t) => t.tag)).toEqual(['a', 'b']);
  });

  it('stamps tags without createdAt with now (whole seconds, UTC) and keeps existing stamps', () => {
    expect(tags.map((t) => t.createdAt)).toEqual(['2024-05-01T10:00:00Z', '2024-04-01T00:00:00Z', '2024-05-01T10:00:00Z']);
  });

  it('fills pullPolicy timeout 600 and backoff 3 only where missing', () => {
    expect(tags.map((t) => t.pullPolicy)).toEqual([
      { timeoutSeconds: 600, backoffLimit: 3 },
      { timeoutSeconds: 30, backoffLimit: 0, ttlSecondsAfterFinished: 1 },
      { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 60 },
    ]);
  });

  it('leaves everything else alone and does not touch its input', () => {
    expect(out.spec?.images?.nginx?.pullSecrets).toEqual(before.spec?.images?.nginx?.pullSecrets);
    expect(out.status?.desired).toBe(3);
    expect(input).toEqual(before);
  });

  it('is idempotent', () => {
    expect(defaultNodeImage(out, new Date('2030-01-01T00:00:00Z'))).toEqual(out);
  });

  it('accepts a NodeImage without spec or status', () => {
    const bare: NodeImage = { metadata: { name: 'node-b' } };
    expect(defaultNodeImage(bare, now)).toEqual(bare);
  });
});

const job: ImagePullJob = {
  apiVersion: API_VERSION_V1ALPHA1,
  kind: KIND_IMAGE_PULL_JOB,
  metadata: { name: 'job', namespace: 'default', finalizers: ['example.com/keep'] },
  spec: { image: 'nginx:1.25', completionPolicy: undefined as never, parallelism: '2' },
};

describe('ImagePullJob defaults', () => {
  it('adds completionPolicy Always, pullPolicy 600/3, imagePullPolicy IfNotPresent and, on create, the finalizer', () => {
    const before = structuredClone(job);
    expect(defaultImagePullJob(job, 'create')).toEqual({
      ...job,
      metadata: { ...job.metadata, finalizers: ['example.com/keep', FINALIZER_DELETION_PROTECTION] },
      spec: {
        image: 'nginx:1.25',
        parallelism: '2',
        completionPolicy: { type: 'Always' },
        pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
        imagePullPolicy: 'IfNotPresent',
      },
    });
    expect(job).toEqual(before);
  });

  it('adds no finalizer on update', () => {
    expect(defaultImagePullJob(job, 'update').metadata?.finalizers).toEqual(['example.com/keep']);
  });

  it('adds the finalizer once, also to a job without metadata', () => {
    const created = defaultImagePullJob(job, 'create');
    expect(defaultImagePullJob(created, 'create')).toEqual(created);
    const { metadata: _metadata, ...bare } = job;
    expect(defaultImagePullJob(bare, 'create').metadata).toEqual({ finalizers: [FINALIZER_DELETION_PROTECTION] });
  });

  const kept: Array<[string, Partial<ImagePullJob['spec']>]> = [
    ['completion type Never', { completionPolicy: { type: 'Never' } }],
    ['a deadline', { completionPolicy: { type: 'Always', activeDeadlineSeconds: 900, ttlSecondsAfterFinished: 10 } }],
    ['a pull policy', { pullPolicy: { timeoutSeconds: 60, backoffLimit: 0 } }],
    ['imagePullPolicy Always', { imagePullPolicy: 'Always' }],
  ];
  it.each(kept)('keeps %s', (_name, spec) => {
    const out = defaultImagePullJob({ ...job, spec: { ...job.spec, ...spec } }, 'update');
    expect(out.spec).toMatchObject(spec);
  });

  it('treats empty strings as unset, like Go', () => {
    const spec = { ...job.spec, completionPolicy: { type: '' as never }, imagePullPolicy: '' as never };
    const out = defaultImagePullJob({ ...job, spec }, 'update');
    expect(out.spec.completionPolicy.type).toBe('Always');
    expect(out.spec.imagePullPolicy).toBe('IfNotPresent');
  });

  it('passes a request without spec through for validation to reject', () => {
    const { spec: _spec, ...bare } = job;
    expect(defaultImagePullJob(bare as ImagePullJob, 'update')).toEqual(bare);
    expect(defaultImageListPullJob(bare as unknown as ImageListPullJob)).toEqual(bare);
  });

  it('does not default parallelism (the controller treats unset as 1)', () => {
    const { parallelism: _parallelism, ...spec } = job.spec;
    expect(defaultImagePullJob({ ...job, spec }, 'create').spec.parallelism).toBeUndefined();
  });
});

describe('ImageListPullJob defaults', () => {
  const list: ImageListPullJob = {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_IMAGE_LIST_PULL_JOB,
    metadata: { name: 'list', namespace: 'default' },
    spec: { images: ['nginx:1.25'], completionPolicy: { type: '' as never }, pullPolicy: { backoffLimit: 1 } },
  };

  it('adds completionPolicy Always and pullPolicy defaults, but neither imagePullPolicy nor a finalizer', () => {
    const before = structuredClone(list);
    expect(defaultImageListPullJob(list)).toEqual({
      ...list,
      spec: { images: ['nginx:1.25'], completionPolicy: { type: 'Always' }, pullPolicy: { timeoutSeconds: 600, backoffLimit: 1 } },
    });
    expect(list).toEqual(before);
  });
});

describe('helpers', () => {
  it('formats times like metav1.Time', () => {
    expect(formatTime(now)).toBe('2024-05-01T10:00:00Z');
  });

  it('sorts by tag without mutating', () => {
    const tags = [{ tag: 'v2' }, { tag: 'v10' }, { tag: 'V1' }];
    expect(sortByTag(tags).map((t) => t.tag)).toEqual(['V1', 'v10', 'v2']);
    expect(tags.map((t) => t.tag)).toEqual(['v2', 'v10', 'V1']);
  });

  const times: Array<[string, boolean]> = [
    ['2024-05-01T10:00:00Z', true],
    ['2024-05-01T10:00:00.5+02:00', true],
    ['2024-05-01 10:00:00Z', false],
    ['2024-13-01T10:00:00Z', false],
    ['yesterday', false],
  ];
  it.each(times)('recognises RFC 3339 time %s: %s', (value, valid) => {
    expect(isRfc3339(value)).toBe(valid);
  });

  const equalities: Array<[string, unknown, unknown, boolean]> = [
    ['absent and null fields', { a: 1, b: null }, { a: 1 }, true],
    ['nested objects in any key order', { a: { x: 1, y: [1, 2] } }, { a: { y: [1, 2], x: 1 } }, true],
    ['the same instant', { t: new Date('2024-05-01T10:00:00Z') }, { t: new Date('2024-05-01T10:00:00.000Z') }, true],
    ['different array order', [1, 2], [2, 1], false],
    ['an empty list and an absent one', { a: [] }, {}, false],
    ['a Date and a string', new Date(0), '1970-01-01T00:00:00Z', false],
    ['different scalars', { a: '1' }, { a: 1 }, false],
  ];
  it.each(equalities)('compares %s', (_name, a, b, equal) => {
    expect(jsonEqual(a, b)).toBe(equal);
    expect(jsonEqual(b, a)).toBe(equal);
  });

  const progress: Array<[number, number, number, string]> = [
    [0, 0, 0, 'job is running, no progress'],
    [0, 0, 3, 'job is running, progress 0.0%'],
    [1, 1, 3, 'job is running, progress 66.7%'],
    [1, 0, 8, 'job is running, progress 12.5%'],
    // exact binary ties round to even, as Go's %.1f does
    [49, 0, 400, 'job is running, progress 12.2%'],
    [3, 0, 400, 'job is running, progress 0.8%'],
    [1, 0, 400, 'job is running, progress 0.2%'],
    [2, 1, 3, 'job is running, progress 100.0%'],
  ];
  it.each(progress)('progress message for %i succeeded, %i failed of %i', (succeeded, failed, desired, message) => {
    expect(jobProgressMessage(succeeded, failed, desired)).toBe(message);
  });
  it('adds the byte share of nodes still pulling to the finished ones, never past 100 %', () => {
    expect(jobProgressMessage(1, 0, 4, 80)).toBe('job is running, progress 45.0%');
    expect(jobProgressMessage(0, 0, 1, 250)).toBe('job is running, progress 100.0%');
  });

  it('builds the event messages with upstream wording', () => {
    expect(pullImageSucceededEventMessage('nginx', '1.25', '2.5s')).toBe('Image nginx:1.25, ecalpsedTime 2.5s');
    expect(killingEventMessage('app', 'restart-app')).toBe('Stopping container app by ContainerRecreateRequest restart-app');
  });
});

describe('wire identifiers', () => {
  const identifiers: Array<[string, string]> = [
    [API_VERSION_V1ALPHA1, 'apps.kruise.io/v1alpha1'],
    [API_VERSION_V1BETA1, 'apps.kruise.io/v1beta1'],
    [LABEL_CRR_NODE_NAME, 'crr.apps.kruise.io/node-name'],
    [LABEL_CRR_POD_UID, 'crr.apps.kruise.io/pod-uid'],
    [LABEL_CRR_ACTIVE, 'crr.apps.kruise.io/active'],
    [LABEL_FAKE_NODE_IMAGE, 'apps.kruise.io/fake-nodeimage'],
    [LABEL_PRE_PREDOWNLOAD_CREATED, 'apps.kruise.io/pre-predownload-created'],
    [LABEL_IMAGE_PREDOWNLOAD_IGNORED, 'apps.kruise.io/image-predownload-ignored'],
    [LABEL_CONTROLLER_REVISION_HASH, 'controller-revision-hash'],
    [LABEL_SECRET_SOURCE_UID, 'imagepulljobs.kruise.io/source-uid'],
    [ANNOTATION_PREDOWNLOAD_PARALLELISM, 'apps.kruise.io/image-predownload-parallelism'],
    [ANNOTATION_PREDOWNLOAD_TIMEOUT_SECONDS, 'apps.kruise.io/image-predownload-timeout-seconds'],
    [ANNOTATION_PREDOWNLOAD_MIN_UPDATED_READY_PODS, 'apps.kruise.io/image-predownload-min-updated-ready-pods'],
    [ANNOTATION_CRR_SYNC_CONTAINER_STATUSES, 'crr.apps.kruise.io/sync-container-statuses'],
    [ANNOTATION_CRR_UNREADY_ACQUIRED, 'crr.apps.kruise.io/unready-acquired'],
    [ANNOTATION_SECRET_SOURCE_KEY, 'imagepulljobs.kruise.io/source-key'],
    [ANNOTATION_SECRET_REFERENCES, 'imagepulljobs.kruise.io/references'],
    [ANNOTATION_SECRET_MODE, 'imagepulljobs.kruise.io/mode'],
    [ANNOTATION_PULLING_IMAGE_BY, 'apps.kruise.io/pulling-image-by'],
    [FINALIZER_DELETION_PROTECTION, 'apps.kruise.io/deletion-protection'],
    [FINALIZER_CRR_UNREADY_ACQUIRED, 'crr.apps.kruise.io/unready-acquired'],
    [CONDITION_KRUISE_POD_READY, 'KruisePodReady'],
    [REASON_PULL_IMAGE_SUCCEED, 'PullImageSucceed'],
    [REASON_PULL_IMAGE_FAILED, 'PullImageFailed'],
    [REASON_KILLING, 'Killing'],
    [REASON_FAILED_PRE_STOP_HOOK, 'FailedPreStopHook'],
    [REASON_CREATED_IMAGE_PULL_JOB, 'CreatedImagePullJob'],
    [REASON_FAILED_CREATE_IMAGE_PULL_JOB, 'FailedCreateImagePullJob'],
    [MESSAGE_CRR_POD_GONE, 'pod has gone'],
    [MESSAGE_CRR_DAEMON_NOT_RESPONDED, 'daemon has not responded for a long time'],
    [MESSAGE_CRR_DEADLINE_EXCEEDED, 'recreating has exceeded the activeDeadlineSeconds'],
    [MESSAGE_NODE_NOT_RESPONDED, 'node has not responded for a long time'],
    [MESSAGE_PULL_DEADLINE_EXCEEDED, 'pulling exceeds the activeDeadlineSeconds'],
    [MESSAGE_JOB_COMPLETED, 'job has completed'],
    [MESSAGE_JOB_DEADLINE_EXCEEDED, 'job exceeds activeDeadlineSeconds'],
    [DEFAULT_KRUISE_NAMESPACE, 'kruise-ts-system'],
    [DEFAULT_DAEMON_CONFIG_NAMESPACE, 'kruise-ts-daemon-config'],
  ];
  it.each(identifiers)('%s', (actual, expected) => {
    expect(actual).toBe(expected);
  });
});
