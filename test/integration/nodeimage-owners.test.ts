import type { ImagePullJob } from '../../api/types/imagepulljob.js';
import { Informer } from '../../kube/informer.js';
import { Resource } from '../../kube/resource.js';
import type { RestClient } from '../../kube/rest.js';
import { OwnerLookup } from '../../manager/nodeimage/owners.js';
import { BARE_NOT_FOUND, type FaultProxy } from '../proxy/fault-proxy.js';
import { kruise, restClient, startProxy } from '../helpers/kube.js';

let proxy: FaultProxy;
let rest: RestClient;
beforeAll(async () => {
  proxy = await startProxy();
  rest = restClient(proxy.url);
});
afterAll(async () => {
  await rest.close();
  await proxy.stop();
});

describe("the NodeImage controller's owner lookup (real API server, through the fault proxy)", () => {
  it("keeps a job it cannot see on a bare 404, a restarting server's answer before it has read the CRDs, and takes it for gone on its NotFound", async () => {
    const jobs = new Resource<ImagePullJob>(rest, kruise.imagePullJobs);
    // Never started: the cache misses every job, so each reference is asked of the server.
    const ref = { namespace: 'default', name: 'kruise-ts-owners-absent', uid: 'a1b2c3d4-0000-4000-8000-000000000001' };
    const bare = proxy.failNext({ ...BARE_NOT_FOUND, match: { method: 'GET', path: /\/imagepulljobs\/kruise-ts-owners-absent$/ } });
    // Dropping the tags of a job that may well be alive would be the loss; keeping them a while is not.
    expect(await new OwnerLookup(new Informer(jobs), jobs).resolve([ref])).toEqual(new Map([[ref.uid, 'alive']]));
    expect(bare.consumed).toBe(1);
    expect(await new OwnerLookup(new Informer(jobs), jobs).resolve([ref])).toEqual(new Map([[ref.uid, 'gone']]));
  });
});
