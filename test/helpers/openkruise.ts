import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import type { KubeObject } from '../../api/types/common.js';
import { generateCerts } from '../../manager/webhook/certs.js';

export const OPENKRUISE_NAMESPACE = 'kruise-system';
/** The manager.webhook.port the fixture renders with (test/fixtures/openkruise/v1.9.yaml). */
const OPENKRUISE_WEBHOOK_PORT = 19876;
export const fixtureFile = join(import.meta.dirname, '..', 'fixtures', 'openkruise', 'v1.9.yaml');

/** OpenKruise v1.9's objects as the fixture describes them. */
export function openKruiseObjects(text = readFileSync(fixtureFile, 'utf8')): Array<KubeObject & Record<string, unknown>> {
  return (loadAll(text) as Array<(KubeObject & Record<string, unknown>) | null>).filter((o): o is KubeObject & Record<string, unknown> => o !== null);
}

/** The webhook paths OpenKruise v1.9 serves for the four kinds kruise-ts owns. */
const daemonKindPaths = new Set([
  '/mutate-apps-kruise-io-nodeimage',
  '/validate-apps-kruise-io-nodeimage',
  '/mutate-apps-kruise-io-imagepulljob',
  '/validate-apps-kruise-io-imagepulljob',
  '/mutate-apps-kruise-io-imagelistpulljob',
  '/validate-apps-kruise-io-imagelistpulljob',
  '/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest',
]);

/**
 * Stands in for OpenKruise v1.9's kruise-manager webhook with KruiseDaemon=false (its Go binary
 * cannot be built here): every review is allowed, except those of the four kinds kruise-ts serves,
 * which upstream's handlers refuse with 403 "feature-gate KruiseDaemon is not enabled"
 * (pkg/webhook/nodeimage/validating/nodeimage_create_update_handler.go and the others). Serves on
 * every address, where the webhook Service's endpoint (a host-network pod) points.
 */
export class OpenKruiseWebhookStandIn {
  private constructor(
    private readonly server: Server,
    readonly caPem: string,
    /** The paths of the reviews answered, in order. */
    readonly calls: string[],
  ) {}

  static async start(): Promise<OpenKruiseWebhookStandIn> {
    const certs = generateCerts([`kruise-webhook-service.${OPENKRUISE_NAMESPACE}.svc`]);
    const calls: string[] = [];
    const server = createServer({ cert: certs.cert, key: certs.key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        calls.push(path);
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request?: { uid?: string } };
        const refused = daemonKindPaths.has(path);
        const response = refused
          ? { uid: review.request?.uid, allowed: false, status: { code: 403, message: 'feature-gate KruiseDaemon is not enabled' } }
          : { uid: review.request?.uid, allowed: true };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(OPENKRUISE_WEBHOOK_PORT, '0.0.0.0', resolve);
    });
    return new OpenKruiseWebhookStandIn(server, certs.caCert, calls);
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server.close(() => r()));
    this.server.closeAllConnections();
  }
}

/** Runs kubectl (the one built with the local cluster) against the test cluster as admin. */
export function kubectl(kubectlPath: string, kubeconfig: string, args: string[], input?: string): string {
  return execFileSync(kubectlPath, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
}
