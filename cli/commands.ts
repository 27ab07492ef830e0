import { LABEL_CRR_NODE_NAME } from '../api/metadata-keys.js';
import type { ContainerRecreateRequest } from '../api/types/containerrecreaterequest.js';
import type { ImageListPullJob } from '../api/types/imagelistpulljob.js';
import type { ImagePullJob } from '../api/types/imagepulljob.js';
import type { NodeImage } from '../api/types/nodeimage.js';
import { Informer } from '../kube/informer.js';
import type { KruiseApi } from '../kube/kruise.js';
import { ApiError, type RestClient } from '../kube/rest.js';
import type { KubeObject } from '../api/types/common.js';
import { Resource } from '../kube/resource.js';
import { age, bar, table } from './format.js';
import { type NodeProgress, crrVerdict, jobNodeProgress, jobPercent, jobVerdict, nodeProgressReader } from './progress.js';

const NODEIMAGE_PAGE = 500;

export interface Output {
  write(text: string): void;
  /** Redraws in place on a terminal; prints changes one after another otherwise. */
  tty: boolean;
}

type Job = ImagePullJob & KubeObject;
type ListJob = ImageListPullJob & KubeObject;
type Crr = ContainerRecreateRequest & KubeObject;

/**
 * Byte progress lives in the NodeImages, read only when there are jobs to show it for: in pages and
 * streamed, keeping each job's few fields per node, as a cluster's NodeImages whole can run to
 * hundreds of megabytes.
 */
async function jobsProgress(rest: RestClient, kruise: KruiseApi, jobs: readonly Job[]): Promise<Map<Job, NodeProgress[]>> {
  const readers = jobs.map((job) => ({ job, read: nodeProgressReader(job), nodes: [] as NodeProgress[] }));
  if (jobs.length > 0) {
    await new Resource<NodeImage & KubeObject>(rest, kruise.nodeImages).listEachPaged(undefined, {}, NODEIMAGE_PAGE, (ni) => {
      for (const { read, nodes } of readers) {
        const p = read(ni);
        if (p) nodes.push(p);
      }
    });
  }
  return new Map(readers.map((r) => [r.job, r.nodes]));
}

/** `kruise-ts status`: ImagePullJobs, ImageListPullJobs and CRRs with their state. */
export async function status(rest: RestClient, kruise: KruiseApi, namespace: string | undefined, out: Output): Promise<number> {
  const jobs = (await new Resource<Job>(rest, kruise.imagePullJobs).list(namespace)).items;
  const lists = (await new Resource<ListJob>(rest, kruise.imageListPullJobs).list(namespace)).items;
  const crrs = (await new Resource<Crr>(rest, kruise.crrs).list(namespace)).items;
  const progress = await jobsProgress(rest, kruise, jobs);
  const ns = (o: KubeObject): string[] => (namespace === undefined ? [o.metadata?.namespace ?? ''] : []);
  const nsCol = namespace === undefined ? ['NAMESPACE'] : [];
  out.write('IMAGEPULLJOBS\n');
  out.write(
    table(
      [...nsCol, 'NAME', 'IMAGE', 'TOTAL', 'ACTIVE', 'SUCCEEDED', 'FAILED', 'PROGRESS', 'STATE', 'AGE'],
      jobs.map((j) => [
        ...ns(j),
        j.metadata?.name ?? '',
        j.spec.image,
        String(j.status?.desired ?? 0),
        String(j.status?.active ?? 0),
        String(j.status?.succeeded ?? 0),
        String(j.status?.failed ?? 0),
        `${jobPercent(j, progress.get(j) ?? []).toFixed(0)}%`,
        jobVerdict(j),
        age(j.metadata?.creationTimestamp),
      ]),
    ) + '\n\n',
  );
  out.write('IMAGELISTPULLJOBS\n');
  out.write(
    table(
      [...nsCol, 'NAME', 'IMAGES', 'COMPLETED', 'SUCCEEDED', 'STATE', 'AGE'],
      lists.map((l) => [
        ...ns(l),
        l.metadata?.name ?? '',
        String(l.spec.images.length),
        `${l.status?.completed ?? 0}/${l.status?.desired ?? l.spec.images.length}`,
        String(l.status?.succeeded ?? 0),
        l.status?.completionTime ? ((l.status.failedImageStatuses ?? []).length > 0 ? 'failed' : 'succeeded') : 'running',
        age(l.metadata?.creationTimestamp),
      ]),
    ) + '\n\n',
  );
  out.write('CONTAINERRECREATEREQUESTS\n');
  out.write(
    table(
      [...nsCol, 'NAME', 'POD', 'NODE', 'PHASE', 'CONTAINERS', 'STATE', 'AGE'],
      crrs.map((c) => [
        ...ns(c),
        c.metadata?.name ?? '',
        c.spec.podName,
        c.metadata?.labels?.[LABEL_CRR_NODE_NAME] ?? '',
        c.status?.phase ?? 'Pending',
        (c.status?.containerRecreateStates ?? []).map((s) => `${s.name}=${s.phase}`).join(',') || '-',
        crrVerdict(c),
        age(c.metadata?.creationTimestamp),
      ]),
    ) + '\n',
  );
  return 0;
}

async function existing<T extends KubeObject>(res: Resource<T>, namespace: string, name: string): Promise<T> {
  try {
    return await res.get(namespace, name);
  } catch (err) {
    if (err instanceof ApiError && err.notFound) throw new Error(`${res.type.kind} ${namespace}/${name} not found`, { cause: err });
    throw err;
  }
}

/**
 * `kruise-ts watch imagepulljob NAME`: live per-node progress (from the NodeImages the job owns a
 * tag in) and the total, until the job completes; exits 1 when any node failed.
 */
export async function watchJob(rest: RestClient, kruise: KruiseApi, namespace: string, name: string, out: Output, timeoutMs: number): Promise<number> {
  const jobsRes = new Resource<Job>(rest, kruise.imagePullJobs);
  await existing(jobsRes, namespace, name);
  const stop = new AbortController();
  const jobInf = new Informer<Job>(jobsRes, { namespace, fieldSelector: `metadata.name=${name}` });
  const niInf = new Informer<NodeImage & KubeObject>(new Resource(rest, kruise.nodeImages));
  void jobInf.run(stop.signal);
  void niInf.run(stop.signal);
  await Promise.all([jobInf.synced, niInf.synced]);
  let last = '';
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const job = jobInf.get(`${namespace}/${name}`);
      if (!job) {
        out.write(`ImagePullJob ${namespace}/${name} was deleted\n`);
        return 1;
      }
      const nodes = jobNodeProgress(job, niInf.list());
      const frame = [
        `ImagePullJob ${namespace}/${name}: ${job.spec.image}`,
        ...nodes.map((n) => `  ${n.node.padEnd(24)} ${bar(n.progress)} ${n.phase}${n.message ? `: ${n.message}` : ''}`),
        `  ${'total'.padEnd(24)} ${bar(jobPercent(job, nodes))} ${job.status?.succeeded ?? 0} succeeded, ${job.status?.failed ?? 0} failed, ${job.status?.active ?? 0} active of ${job.status?.desired ?? 0}${job.status?.message ? ` (${job.status.message})` : ''}`,
      ].join('\n');
      if (frame !== last) {
        out.write(out.tty && last !== '' ? `\x1b[${last.split('\n').length}A\x1b[J${frame}\n` : `${frame}\n`);
        last = frame;
      }
      const verdict = jobVerdict(job);
      if (verdict !== 'running') {
        out.write(verdict === 'succeeded' ? 'job succeeded\n' : `job failed on: ${(job.status?.failedNodes ?? []).join(', ')}\n`);
        return verdict === 'succeeded' ? 0 : 1;
      }
      if (Date.now() > deadline) {
        out.write(`timed out after ${Math.round(timeoutMs / 1000)}s, job still running\n`);
        return 2;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    stop.abort();
  }
}

/** `kruise-ts watch crr NAME`: follows a recreate until it completes; exits 1 unless every container was recreated. */
export async function watchCrr(rest: RestClient, kruise: KruiseApi, namespace: string, name: string, out: Output, timeoutMs: number): Promise<number> {
  const res = new Resource<Crr>(rest, kruise.crrs);
  await existing(res, namespace, name);
  const stop = new AbortController();
  const inf = new Informer<Crr>(res, { namespace, fieldSelector: `metadata.name=${name}` });
  void inf.run(stop.signal);
  await inf.synced;
  let last = '';
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const crr = inf.get(`${namespace}/${name}`);
      if (!crr) {
        out.write(`ContainerRecreateRequest ${namespace}/${name} was deleted\n`);
        return 1;
      }
      const states = (crr.status?.containerRecreateStates ?? []).map((s) => `${s.name}=${s.phase}${s.message ? ` (${s.message})` : ''}`);
      const line = `${crr.status?.phase ?? 'Pending'}${states.length > 0 ? `: ${states.join(', ')}` : ''}${crr.status?.message ? ` - ${crr.status.message}` : ''}`;
      if (line !== last) {
        out.write(`ContainerRecreateRequest ${namespace}/${name} on pod ${crr.spec.podName}: ${line}\n`);
        last = line;
      }
      const verdict = crrVerdict(crr);
      if (verdict !== 'running') return verdict === 'succeeded' ? 0 : 1;
      if (Date.now() > deadline) {
        out.write(`timed out after ${Math.round(timeoutMs / 1000)}s\n`);
        return 2;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    stop.abort();
  }
}
