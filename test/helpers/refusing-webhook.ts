import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../api/types/common.js';
import { generateCerts } from '../../manager/webhook/certs.js';
import { core, Resource } from '../../kube/resource.js';
import { ApiError, type RestClient } from '../../kube/rest.js';

interface Review {
  request?: { uid: string; name?: string; userInfo?: { username?: string } };
}

/**
 * A real validating admission webhook that refuses the updates of some objects, so a client's write
 * fails at the real API server (403, as any admission refusal) with no proxy in front of the client.
 * Only objects carrying `labels` reach it, so other tests' writes on the shared cluster never do.
 */
export class RefusingWebhook {
  private constructor(
    /** The names whose updates were refused, one entry per refusal. */
    readonly refused: string[],
    private readonly server: Server,
    private readonly configs: Resource<KubeObject>,
    private readonly name: string,
  ) {}

  /**
   * Registers the webhook for updates of `resource` (not its subresources) in `group`, and returns
   * once the API server calls it. `refuse` decides each update; it is asked for `probe` too.
   */
  static async start(
    rest: RestClient,
    opts: { name: string; group: string; resource: string; labels: Record<string, string>; refuse: (name: string, user: string) => boolean; probe: () => Promise<unknown> },
  ): Promise<RefusingWebhook> {
    const certs = generateCerts(['127.0.0.1']);
    const refused: string[] = [];
    const server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review).request;
        const name = r?.name ?? '';
        const refuse = opts.refuse(name, r?.userInfo?.username ?? '');
        if (refuse) refused.push(name);
        const response = { uid: r?.uid ?? '', allowed: !refuse, ...(refuse ? { status: { code: 403, reason: 'Forbidden', message: `refused by ${opts.name}` } } : {}) };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const configs = new Resource<KubeObject>(rest, core.validatingwebhookconfigurations);
    const hook = new RefusingWebhook(refused, server, configs, opts.name);
    await configs.create({
      metadata: { name: opts.name },
      webhooks: [
        {
          name: `${opts.name}.kruise-ts.test`,
          clientConfig: { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, caBundle: Buffer.from(certs.caCert).toString('base64') },
          rules: [{ apiGroups: [opts.group], apiVersions: ['*'], operations: ['UPDATE'], resources: [opts.resource], scope: '*' }],
          objectSelector: { matchLabels: opts.labels },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 5,
        },
      ],
    } as KubeObject);
    // The API server reads new configurations a moment later: until the probe is refused, it may not call.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const err = await opts.probe().then(() => undefined, (e: unknown) => e);
      if (err instanceof ApiError && err.status === 403 && err.message.includes(`refused by ${opts.name}`)) break;
      if (err !== undefined) throw err;
      if (Date.now() > deadline) throw new Error(`the API server never called webhook ${opts.name}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    hook.refused.length = 0;
    return hook;
  }

  async stop(): Promise<void> {
    await this.configs.delete(undefined, this.name).catch(() => undefined);
    const closed = new Promise<void>((r) => this.server.close(() => r()));
    // The API server keeps its connection alive: close() alone would wait for it.
    this.server.closeAllConnections();
    await closed;
  }
}
