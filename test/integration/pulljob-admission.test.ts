import type { ImageListPullJob } from '../../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import type { NodeImage } from '../../api/types/nodeimage.js';
import { ApiError } from '../../kube/rest.js';
import { Resource } from '../../kube/resource.js';
import { createNamespace, deleteNamespace, restClient, kruise } from '../helpers/kube.js';

// Invalid objects are refused by the manager's admission webhook through the real API server, with
// the webhook's own messages.
const rest = restClient();
const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
const lists = new Resource<ImageListPullJob>(rest, kruise.imageListPullJobs);
const nis = new Resource<NodeImage>(rest, kruise.nodeImages);
let ns = '';
beforeAll(async () => {
  ns = await createNamespace(rest, 'admission');
});
afterAll(() => deleteNamespace(rest, ns));

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => new Error('admitted'),
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw err;
  return err;
}

const spec = (over: Partial<ImagePullJob['spec']>): ImagePullJob['spec'] => ({ image: 'nginx:1.25', completionPolicy: { type: 'Always' }, ...over });

describe('admission of ImagePullJob, ImageListPullJob and NodeImage', () => {
  it.each<[string, Partial<ImagePullJob['spec']>, string]>([
    ['names with a label selector', { selector: { names: ['a'], matchLabels: { x: 'y' } } }, 'spec.selector: names and matchLabels/matchExpressions are mutually exclusive'],
    ['selector with podSelector', { selector: { names: ['a'] }, podSelector: { matchLabels: { app: 'x' } } }, 'spec.podSelector: must not be set together with spec.selector'],
    ['duplicate node names', { selector: { names: ['a', 'a'] } }, 'spec.selector.names[1]: duplicate node name "a"'],
    ['a bad selector operator value', { selector: { matchExpressions: [{ key: 'k', operator: 'In', values: [] }] } }, 'spec.selector.matchExpressions[0].values: must be non-empty when operator is In'],
    ['an invalid image', { image: 'Nginx:latest' }, 'spec.image: invalid image reference "Nginx:latest": repository name must be lowercase'],
    ['a percentage parallelism', { parallelism: '50%' }, 'spec.parallelism: must be a non-negative integer, got "50%"'],
    ['a negative parallelism', { parallelism: -1 }, 'spec.parallelism: must be a non-negative integer, got -1'],
    ['a deadline shorter than one attempt', { completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } }, 'spec.completionPolicy.activeDeadlineSeconds: must be >= pullPolicy.timeoutSeconds (600)'],
    ['Never with a TTL', { completionPolicy: { type: 'Never', ttlSecondsAfterFinished: 60 } }, 'spec.completionPolicy.ttlSecondsAfterFinished: must not be set when spec.completionPolicy.type is Never'],
    ['an invalid secret name', { pullSecrets: ['Bad_Name'] }, 'spec.pullSecrets[0]: "Bad_Name" is not a valid secret name'],
  ])('refuses an ImagePullJob with %s', async (_what, over, message) => {
    const err = await refusal(jobs.create({ metadata: { name: 'bad', namespace: ns }, spec: spec(over) }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('admission webhook "vimagepulljob.kruise-ts.io" denied the request');
    expect(err.message).toContain(message);
  });

  it('refuses a change of pullSecrets', async () => {
    await jobs.create({ metadata: { name: 'secrets', namespace: ns }, spec: spec({ pullSecrets: ['a'], parallelism: 0, selector: { names: ['none'] } }) });
    // A merge patch: the controller writes the job's status meanwhile, which a PUT would conflict with.
    const err = await refusal(jobs.patch(ns, 'secrets', { spec: { pullSecrets: ['b'] } }));
    expect(err.message).toContain('spec.pullSecrets: field is immutable');
    expect((await jobs.patch(ns, 'secrets', { spec: { parallelism: 1 } })).spec.parallelism).toBe(1);
    await jobs.delete(ns, 'secrets');
  });

  it.each<[string, Partial<ImageListPullJob['spec']>, string]>([
    ['no images', { images: [] }, 'spec.images: must not be empty'],
    ['a duplicate image', { images: ['nginx:1', 'nginx:1'] }, 'spec.images[1]: duplicate image "nginx:1"'],
    ['too many images', { images: Array.from({ length: 256 }, (_, i) => `example.com/i${i}:1`) }, 'spec.images: must have at most 255 items, got 256'],
    ['Never with a deadline', { images: ['nginx:1'], completionPolicy: { type: 'Never', activeDeadlineSeconds: 900 } }, 'spec.completionPolicy.activeDeadlineSeconds: must not be set when spec.completionPolicy.type is Never'],
  ])('refuses an ImageListPullJob with %s', async (_what, over, message) => {
    const err = await refusal(lists.create({ metadata: { name: 'bad', namespace: ns }, spec: { images: ['nginx:1'], completionPolicy: { type: 'Always' }, ...over } }));
    expect(err.message).toContain('admission webhook "vimagelistpulljob.kruise-ts.io" denied the request');
    expect(err.message).toContain(message);
  });

  it('refuses a NodeImage with more than 256 images, or a tag without TTL', async () => {
    const images: NonNullable<NodeImage['spec']>['images'] = {};
    for (let i = 0; i < 257; i++) images[`example.com/i${i}`] = { tags: [{ tag: '1', pullPolicy: { ttlSecondsAfterFinished: 60 } }] };
    const tooMany = await refusal(nis.create({ metadata: { name: `${ns}-many` }, spec: { images } }));
    expect(tooMany.message).toContain('spec.images: must have at most 256 images, got 257');
    const noTtl = await refusal(nis.create({ metadata: { name: `${ns}-nottl` }, spec: { images: { nginx: { tags: [{ tag: '1' }] } } } }));
    expect(noTtl.message).toContain('spec.images[nginx].tags[0].pullPolicy.ttlSecondsAfterFinished: required');
  });
});
