import {
  API_VERSION_V1ALPHA1,
  KIND_IMAGE_LIST_PULL_JOB,
  KIND_IMAGE_PULL_JOB,
  KIND_NODE_IMAGE,
  validateImageListPullJob,
  validateImagePullJob,
  validateLabelSelector,
  validateNodeImage,
} from '../../api/index.js';
import type { ImageListPullJob, ImagePullJob, NodeImage } from '../../api/index.js';

const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;

/** A copy of `base` changed by `change`, so each table row states only what it alters. */
function variant<T>(base: T, change: (copy: T) => void): T {
  const copy = structuredClone(base);
  change(copy);
  return copy;
}

describe('NodeImage validation', () => {
  const base: NodeImage = {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_NODE_IMAGE,
    metadata: { name: 'node-a' },
    spec: {
      images: {
        nginx: {
          tags: [
            {
              tag: '1.25',
              createdAt: '2024-05-01T10:00:00Z',
              pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 300 },
              version: 0,
            },
          ],
        },
      },
    },
  };
  const images = (ni: NodeImage): NonNullable<NonNullable<NodeImage['spec']>['images']> => ni.spec?.images ?? {};
  const nginx = (ni: NodeImage) => {
    const image = images(ni).nginx;
    if (image === undefined) throw new Error('fixture has no nginx');
    return image;
  };
  const tag0 = (ni: NodeImage) => {
    const tag = nginx(ni).tags[0];
    if (tag === undefined) throw new Error('fixture has no tag');
    return tag;
  };
  const manyImages = (n: number) => (ni: NodeImage) => {
    for (let i = 0; i < n - 1; i++) images(ni)[`image-${i}`] = structuredClone(nginx(ni));
  };

  const cases: Array<[string, (ni: NodeImage) => void, string[]]> = [
    ['a valid NodeImage', () => undefined, []],
    ['a NodeImage without spec', (ni) => delete ni.spec, []],
    ['an image without tags list', (ni) => (images(ni).busybox = { tags: [] }), []],
    ['256 images', manyImages(256), []],
    ['257 images', manyImages(257), ['spec.images: must have at most 256 images, got 257']],
    ['an empty image name', (ni) => (images(ni)[''] = nginx(ni)), ['spec.images[]: image name must not be empty']],
    [
      'an image name with a tag',
      (ni) => (images(ni)['nginx:1.0'] = nginx(ni)),
      ['spec.images[nginx:1.0]: image name "nginx:1.0" must not contain a tag or digest'],
    ],
    [
      'an invalid image name',
      (ni) => (images(ni).Nginx = nginx(ni)),
      ['spec.images[Nginx]: invalid image reference "Nginx": repository name must be lowercase'],
    ],
    ['a registry with port as image name', (ni) => (images(ni)['localhost:5000/app'] = nginx(ni)), []],
    ['missing tags', (ni) => (images(ni).busybox = { tags: undefined as never }), ['spec.images[busybox].tags: required']],
    ['an empty tag', (ni) => (tag0(ni).tag = ''), ['spec.images[nginx].tags[0].tag: must not be empty']],
    [
      'a duplicate tag',
      (ni) => nginx(ni).tags.push(structuredClone(tag0(ni))),
      ['spec.images[nginx].tags[1].tag: duplicate tag "1.25"'],
    ],
    ['a digest as tag', (ni) => (tag0(ni).tag = digest), []],
    [
      'a tag that is not a tag',
      (ni) => (tag0(ni).tag = '-bad'),
      ['spec.images[nginx].tags[0].tag: "-bad" is neither a valid tag nor a digest'],
    ],
    [
      'a short digest',
      (ni) => (tag0(ni).tag = 'sha256:abc'),
      ['spec.images[nginx].tags[0].tag: "sha256:abc" is neither a valid tag nor a digest'],
    ],
    [
      'a digest with non-hex characters',
      (ni) => (tag0(ni).tag = `sha256:${'g'.repeat(64)}`),
      [`spec.images[nginx].tags[0].tag: invalid digest "sha256:${'g'.repeat(64)}"`],
    ],
    ['missing createdAt', (ni) => delete tag0(ni).createdAt, ['spec.images[nginx].tags[0].createdAt: required']],
    [
      'a createdAt that is not a time',
      (ni) => (tag0(ni).createdAt = 'yesterday'),
      ['spec.images[nginx].tags[0].createdAt: must be an RFC 3339 time, got "yesterday"'],
    ],
    ['a negative version', (ni) => (tag0(ni).version = -1), ['spec.images[nginx].tags[0].version: must be >= 0, got -1']],
    ['a fractional version', (ni) => (tag0(ni).version = 1.5), ['spec.images[nginx].tags[0].version: must be an integer, got 1.5']],
    ['missing pullPolicy', (ni) => delete tag0(ni).pullPolicy, ['spec.images[nginx].tags[0].pullPolicy: required']],
    [
      'missing ttlSecondsAfterFinished',
      (ni) => (tag0(ni).pullPolicy = { timeoutSeconds: 600 }),
      ['spec.images[nginx].tags[0].pullPolicy.ttlSecondsAfterFinished: required'],
    ],
    [
      'out-of-range pull policy numbers',
      (ni) => (tag0(ni).pullPolicy = { timeoutSeconds: 0, backoffLimit: -1, ttlSecondsAfterFinished: -1, activeDeadlineSeconds: 0 }),
      [
        'spec.images[nginx].tags[0].pullPolicy.ttlSecondsAfterFinished: must be >= 0, got -1',
        'spec.images[nginx].tags[0].pullPolicy.timeoutSeconds: must be >= 1, got 0',
        'spec.images[nginx].tags[0].pullPolicy.backoffLimit: must be >= 0, got -1',
        'spec.images[nginx].tags[0].pullPolicy.activeDeadlineSeconds: must be >= 1, got 0',
      ],
    ],
    [
      'an int32 overflow',
      (ni) => (tag0(ni).pullPolicy = { ttlSecondsAfterFinished: 2147483648 }),
      ['spec.images[nginx].tags[0].pullPolicy.ttlSecondsAfterFinished: must be <= 2147483647, got 2147483648'],
    ],
    ['imagePullPolicy Always', (ni) => (tag0(ni).imagePullPolicy = 'Always'), []],
    [
      'imagePullPolicy Never',
      (ni) => (tag0(ni).imagePullPolicy = 'Never' as never),
      ['spec.images[nginx].tags[0].imagePullPolicy: unsupported value "Never" (must be one of Always, IfNotPresent)'],
    ],
    ['a complete pull secret', (ni) => (nginx(ni).pullSecrets = [{ namespace: 'kruise-daemon-config', name: 'cred' }]), []],
    [
      'an incomplete pull secret',
      (ni) => (nginx(ni).pullSecrets = [{ name: 'cred' }, { namespace: 'kruise-daemon-config', name: '' }]),
      ['spec.images[nginx].pullSecrets[0].namespace: must not be empty', 'spec.images[nginx].pullSecrets[1].name: must not be empty'],
    ],
    [
      'several problems at once',
      (ni) => {
        tag0(ni).version = -2;
        delete tag0(ni).createdAt;
      },
      ['spec.images[nginx].tags[0].createdAt: required', 'spec.images[nginx].tags[0].version: must be >= 0, got -2'],
    ],
  ];
  it.each(cases)('%s', (_name, change, errors) => {
    expect(validateNodeImage(variant(base, change))).toEqual(errors);
  });
});

const baseJob: ImagePullJob = {
  apiVersion: API_VERSION_V1ALPHA1,
  kind: KIND_IMAGE_PULL_JOB,
  metadata: { name: 'job', namespace: 'default' },
  spec: { image: 'nginx:1.25', completionPolicy: { type: 'Always' } },
};

describe('ImagePullJob validation on create', () => {
  const cases: Array<[string, (job: ImagePullJob) => void, string[]]> = [
    ['a valid job', () => undefined, []],
    ['a job before defaulting (no completionPolicy)', (j) => delete (j.spec as Partial<ImagePullJob['spec']>).completionPolicy, []],
    ['an empty completion type (defaulted to Always)', (j) => (j.spec.completionPolicy.type = '' as never), []],
    ['an image pinned by digest', (j) => (j.spec.image = `ghcr.io/example/app@${digest}`), []],
    ['an empty image', (j) => (j.spec.image = ''), ['spec.image: must not be empty']],
    ['an invalid image', (j) => (j.spec.image = 'nginx:-x'), ['spec.image: invalid image reference "nginx:-x": invalid tag "-x"']],
    ['selector by names', (j) => (j.spec.selector = { names: ['a', 'b'] }), []],
    ['an empty selector', (j) => (j.spec.selector = {}), []],
    [
      'names with matchLabels',
      (j) => (j.spec.selector = { names: ['a'], matchLabels: { zone: 'a' } }),
      ['spec.selector: names and matchLabels/matchExpressions are mutually exclusive'],
    ],
    [
      'empty names with matchExpressions',
      (j) => (j.spec.selector = { names: [], matchExpressions: [{ key: 'zone', operator: 'Exists' }] }),
      ['spec.selector: names and matchLabels/matchExpressions are mutually exclusive'],
    ],
    [
      'duplicate node names',
      (j) => (j.spec.selector = { names: ['a', 'b', 'a'] }),
      ['spec.selector.names[2]: duplicate node name "a"'],
    ],
    [
      'an invalid node label selector',
      (j) => (j.spec.selector = { matchExpressions: [{ key: 'zone', operator: 'Equals', values: ['a'] }] }),
      ['spec.selector.matchExpressions[0].operator: unsupported value "Equals" (must be one of In, NotIn, Exists, DoesNotExist)'],
    ],
    ['a pod selector', (j) => (j.spec.podSelector = { matchLabels: { app: 'web' } }), []],
    [
      'selector with podSelector',
      (j) => {
        j.spec.selector = { names: ['a'] };
        j.spec.podSelector = { matchLabels: { app: 'web' } };
      },
      ['spec.podSelector: must not be set together with spec.selector'],
    ],
    [
      'an invalid pod selector',
      (j) => (j.spec.podSelector = { matchExpressions: [{ key: 'app', operator: 'In' }] }),
      ['spec.podSelector.matchExpressions[0].values: must be non-empty when operator is In'],
    ],
    ['parallelism 0 (paused)', (j) => (j.spec.parallelism = 0), []],
    ['parallelism as integer text', (j) => (j.spec.parallelism = '3'), []],
    ['negative parallelism', (j) => (j.spec.parallelism = -1), ['spec.parallelism: must be a non-negative integer, got -1']],
    ['fractional parallelism', (j) => (j.spec.parallelism = 1.5), ['spec.parallelism: must be a non-negative integer, got 1.5']],
    ['percent parallelism', (j) => (j.spec.parallelism = '50%'), ['spec.parallelism: must be a non-negative integer, got "50%"']],
    ['negative parallelism text', (j) => (j.spec.parallelism = '-1'), ['spec.parallelism: must be a non-negative integer, got "-1"']],
    ['word parallelism', (j) => (j.spec.parallelism = 'many'), ['spec.parallelism: must be a non-negative integer, got "many"']],
    [
      'a zero timeout and negative retries',
      (j) => (j.spec.pullPolicy = { timeoutSeconds: 0, backoffLimit: -1 }),
      ['spec.pullPolicy.timeoutSeconds: must be >= 1, got 0', 'spec.pullPolicy.backoffLimit: must be >= 0, got -1'],
    ],
    [
      'an unknown completion type',
      (j) => (j.spec.completionPolicy = { type: 'Sometimes' as never }),
      ['spec.completionPolicy.type: unsupported value "Sometimes" (must be one of Always, Never)'],
    ],
    [
      'Always with a zero deadline',
      (j) => (j.spec.completionPolicy.activeDeadlineSeconds = 0),
      ['spec.completionPolicy.activeDeadlineSeconds: must be >= 1, got 0'],
    ],
    ['Always with a deadline equal to the default timeout', (j) => (j.spec.completionPolicy.activeDeadlineSeconds = 600), []],
    [
      'Always with a deadline below the default timeout',
      (j) => (j.spec.completionPolicy.activeDeadlineSeconds = 599),
      ['spec.completionPolicy.activeDeadlineSeconds: must be >= pullPolicy.timeoutSeconds (600)'],
    ],
    [
      'Always with a deadline above a shorter timeout',
      (j) => {
        j.spec.pullPolicy = { timeoutSeconds: 60 };
        j.spec.completionPolicy.activeDeadlineSeconds = 100;
      },
      [],
    ],
    [
      'Always with a deadline below a shorter timeout',
      (j) => {
        j.spec.pullPolicy = { timeoutSeconds: 60 };
        j.spec.completionPolicy.activeDeadlineSeconds = 30;
      },
      ['spec.completionPolicy.activeDeadlineSeconds: must be >= pullPolicy.timeoutSeconds (60)'],
    ],
    [
      'Always with a fractional deadline',
      (j) => (j.spec.completionPolicy.activeDeadlineSeconds = 700.5),
      ['spec.completionPolicy.activeDeadlineSeconds: must be an integer, got 700.5'],
    ],
    ['Always with a TTL', (j) => (j.spec.completionPolicy.ttlSecondsAfterFinished = 0), []],
    [
      'Always with a negative TTL',
      (j) => (j.spec.completionPolicy.ttlSecondsAfterFinished = -1),
      ['spec.completionPolicy.ttlSecondsAfterFinished: must be >= 0, got -1'],
    ],
    ['Never', (j) => (j.spec.completionPolicy = { type: 'Never' }), []],
    [
      'Never with deadline and TTL',
      (j) => (j.spec.completionPolicy = { type: 'Never', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 60 }),
      [
        'spec.completionPolicy.activeDeadlineSeconds: must not be set when spec.completionPolicy.type is Never',
        'spec.completionPolicy.ttlSecondsAfterFinished: must not be set when spec.completionPolicy.type is Never',
      ],
    ],
    ['imagePullPolicy Always', (j) => (j.spec.imagePullPolicy = 'Always'), []],
    [
      'imagePullPolicy Never',
      (j) => (j.spec.imagePullPolicy = 'Never' as never),
      ['spec.imagePullPolicy: unsupported value "Never" (must be one of Always, IfNotPresent)'],
    ],
    ['valid pull secret names', (j) => (j.spec.pullSecrets = ['registry-cred', 'other.cred']), []],
    [
      'an invalid pull secret name',
      (j) => (j.spec.pullSecrets = ['ok', 'Bad_Name']),
      ['spec.pullSecrets[1]: "Bad_Name" is not a valid secret name'],
    ],
    ['sandbox config', (j) => (j.spec.sandboxConfig = { labels: { a: 'b' }, annotations: { 'x/y': 'anything goes' } }), []],
  ];
  it.each(cases)('%s', (_name, change, errors) => {
    expect(validateImagePullJob(variant(baseJob, change))).toEqual(errors);
  });
});

describe('requests without spec (webhooks run before schema validation)', () => {
  it('reports the missing spec instead of failing', () => {
    const { spec: _spec, ...job } = baseJob;
    expect(validateImagePullJob(job as ImagePullJob)).toEqual(['spec: required']);
    expect(validateImagePullJob(job as ImagePullJob, baseJob)).toEqual(['spec: required']);
    expect(validateImageListPullJob(job as ImageListPullJob)).toEqual(['spec: required']);
  });
});

describe('ImagePullJob validation on update', () => {
  const old = variant(baseJob, (j) => (j.spec.pullSecrets = ['a', 'b']));
  const cases: Array<[string, (job: ImagePullJob) => void, string[]]> = [
    ['an unchanged job', () => undefined, []],
    ['other fields changed', (j) => (j.spec.parallelism = 5), []],
    ['the same secrets reordered', (j) => (j.spec.pullSecrets = ['b', 'a']), []],
    ['a secret added', (j) => (j.spec.pullSecrets = ['a', 'b', 'c']), ['spec.pullSecrets: field is immutable']],
    ['a secret replaced', (j) => (j.spec.pullSecrets = ['a', 'c']), ['spec.pullSecrets: field is immutable']],
    ['the secrets removed', (j) => delete j.spec.pullSecrets, ['spec.pullSecrets: field is immutable']],
  ];
  it.each(cases)('%s', (_name, change, errors) => {
    expect(validateImagePullJob(variant(old, change), old)).toEqual(errors);
  });

  it('treats an absent list and an empty list as the same', () => {
    const none = variant(baseJob, (j) => delete j.spec.pullSecrets);
    expect(validateImagePullJob(variant(none, (j) => (j.spec.pullSecrets = [])), none)).toEqual([]);
  });

  it('still applies the create rules', () => {
    expect(validateImagePullJob(variant(old, (j) => (j.spec.image = '')), old)).toEqual(['spec.image: must not be empty']);
  });

  it('refuses spec edits of a finished job but to its TTL (upstream admits and ignores them, kruise#1386)', () => {
    const finished = variant(old, (j) => (j.status = { desired: 1, succeeded: 1, completionTime: '2024-05-01T10:00:00Z' }));
    const refused = ['spec: the job finished at 2024-05-01T10:00:00Z and pulls nothing more, so its spec cannot change (only completionPolicy.ttlSecondsAfterFinished may): create a new ImagePullJob, or delete this one and create it again'];
    expect(validateImagePullJob(variant(finished, (j) => (j.spec.parallelism = 5)), finished)).toEqual(refused);
    expect(validateImagePullJob(variant(finished, (j) => (j.spec.image = 'nginx:1.26')), finished)).toEqual(refused);
    expect(validateImagePullJob(variant(finished, (j) => (j.spec.completionPolicy = { type: 'Always', ttlSecondsAfterFinished: 60 })), finished)).toEqual([]);
    expect(validateImagePullJob(variant(finished, (j) => (j.metadata = { ...j.metadata, labels: { a: 'b' } })), finished)).toEqual([]);
    expect(validateImagePullJob(variant(old, (j) => (j.spec.parallelism = 5)), old)).toEqual([]);
  });
});

describe('ImageListPullJob validation', () => {
  const base: ImageListPullJob = {
    apiVersion: API_VERSION_V1ALPHA1,
    kind: KIND_IMAGE_LIST_PULL_JOB,
    metadata: { name: 'list', namespace: 'default' },
    spec: { images: ['nginx:1.25', 'busybox:1.36'], completionPolicy: { type: 'Always' } },
  };
  const nImages = (n: number) => (j: ImageListPullJob) => (j.spec.images = Array.from({ length: n }, (_, i) => `app-${i}:1.0`));
  const cases: Array<[string, (job: ImageListPullJob) => void, string[]]> = [
    ['a valid job', () => undefined, []],
    ['no images', (j) => (j.spec.images = []), ['spec.images: must not be empty']],
    ['images missing', (j) => delete (j.spec as Partial<ImageListPullJob['spec']>).images, ['spec.images: must not be empty']],
    ['255 images', nImages(255), []],
    ['256 images', nImages(256), ['spec.images: must have at most 255 items, got 256']],
    ['a duplicate image', (j) => j.spec.images.push('nginx:1.25'), ['spec.images[2]: duplicate image "nginx:1.25"']],
    ['the same image written differently', (j) => j.spec.images.push('docker.io/library/nginx:1.25'), []],
    [
      'an invalid image',
      (j) => (j.spec.images[0] = 'Nginx'),
      ['spec.images[0]: invalid image reference "Nginx": repository name must be lowercase'],
    ],
    [
      'a deadline below the timeout (its child jobs would be refused)',
      (j) => (j.spec.completionPolicy.activeDeadlineSeconds = 300),
      ['spec.completionPolicy.activeDeadlineSeconds: must be >= pullPolicy.timeoutSeconds (600)'],
    ],
    [
      'Never with a TTL',
      (j) => (j.spec.completionPolicy = { type: 'Never', ttlSecondsAfterFinished: 60 }),
      ['spec.completionPolicy.ttlSecondsAfterFinished: must not be set when spec.completionPolicy.type is Never'],
    ],
    [
      'an unknown completion type',
      (j) => (j.spec.completionPolicy = { type: 'Once' as never }),
      ['spec.completionPolicy.type: unsupported value "Once" (must be one of Always, Never)'],
    ],
    [
      'selector with podSelector',
      (j) => {
        j.spec.selector = { matchLabels: { zone: 'a' } };
        j.spec.podSelector = { matchLabels: { app: 'web' } };
      },
      ['spec.podSelector: must not be set together with spec.selector'],
    ],
    ['percent parallelism', (j) => (j.spec.parallelism = '10%'), ['spec.parallelism: must be a non-negative integer, got "10%"']],
  ];
  it.each(cases)('%s', (_name, change, errors) => {
    expect(validateImageListPullJob(variant(base, change))).toEqual(errors);
  });
});

describe('label selector validation', () => {
  const alphanumericEnds = "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  const cases: Array<[string, Parameters<typeof validateLabelSelector>[0], string[]]> = [
    ['an empty selector', {}, []],
    ['labels with prefixed keys', { matchLabels: { 'example.com/role': 'web', tier: '' } }, []],
    [
      'every operator used properly',
      {
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['x'] },
          { key: 'b', operator: 'NotIn', values: ['y', 'z'] },
          { key: 'c', operator: 'Exists' },
          { key: 'd', operator: 'DoesNotExist', values: [] },
        ],
      },
      [],
    ],
    [
      'a key with a space',
      { matchLabels: { 'a b': 'x' } },
      [`sel.matchLabels[a b]: invalid label key: name part must consist of ${alphanumericEnds}`],
    ],
    [
      'a key with an uppercase prefix',
      { matchLabels: { 'Example.com/x': 'y' } },
      ['sel.matchLabels[Example.com/x]: invalid label key: prefix part must be a lowercase RFC 1123 subdomain'],
    ],
    [
      'a key with two slashes',
      { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] },
      ['sel.matchExpressions[0].key: invalid label key: must have at most one "/"'],
    ],
    [
      'a name part longer than 63 characters',
      { matchLabels: { ['k'.repeat(64)]: 'v' } },
      [`sel.matchLabels[${'k'.repeat(64)}]: invalid label key: name part must be no more than 63 characters`],
    ],
    [
      'an invalid value',
      { matchLabels: { app: '-web' } },
      [`sel.matchLabels[app]: invalid label value "-web": must be empty or consist of ${alphanumericEnds}`],
    ],
    [
      'a value longer than 63 characters',
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['v'.repeat(64)] }] },
      [`sel.matchExpressions[0].values[0]: invalid label value "${'v'.repeat(64)}": must be no more than 63 characters`],
    ],
    [
      'NotIn without values',
      { matchExpressions: [{ key: 'app', operator: 'NotIn', values: [] }] },
      ['sel.matchExpressions[0].values: must be non-empty when operator is NotIn'],
    ],
    [
      'DoesNotExist with values',
      { matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: ['x'] }] },
      ['sel.matchExpressions[0].values: must be empty when operator is DoesNotExist'],
    ],
    [
      'an unknown operator',
      { matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] },
      ['sel.matchExpressions[0].operator: unsupported value "Gt" (must be one of In, NotIn, Exists, DoesNotExist)'],
    ],
  ];
  it.each(cases)('%s', (_name, selector, errors) => {
    expect(validateLabelSelector(selector, 'sel')).toEqual(errors);
  });
});
