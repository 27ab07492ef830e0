import type { AdmissionUser } from '../../api/daemon-own-node.js';
import { createServer, type Server } from 'node:https';
import jsonpatch from 'fast-json-patch';
import type { AdmissionResult } from '../../api/admission.js';
import { componentLogger, errorFields, type Logger } from '../../kube/log.js';
import { conversionResponse, type ConversionReview } from './convert.js';

export interface AdmissionRequest {
  uid: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  namespace?: string;
  name?: string;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  resource?: { group?: string; version?: string; resource?: string };
  subResource?: string;
  /** Who is writing: the own-node check reads the ServiceAccount and its token's pod claims. */
  userInfo?: AdmissionUser;
}

/** A hook: decides on one request; mutating hooks return the object to store. */
export type AdmissionHandler = (req: AdmissionRequest) => Promise<AdmissionResult<unknown>>;

interface AdmissionReview {
  apiVersion?: string;
  kind?: string;
  request?: AdmissionRequest;
}

/** The AdmissionReview v1 response for a decision: a JSON patch for changes, a status for refusals. */
function reviewResponse(req: AdmissionRequest, result: AdmissionResult<unknown>): Record<string, unknown> {
  const response: Record<string, unknown> = { uid: req.uid, allowed: result.allowed };
  if (!result.allowed) {
    response['status'] = { code: result.code, message: result.message, reason: result.code === 403 ? 'Forbidden' : 'BadRequest' };
  } else if (req.object !== undefined) {
    const patch = jsonpatch.compare(req.object as object, result.object as object);
    if (patch.length > 0) {
      response['patchType'] = 'JSONPatch';
      response['patch'] = Buffer.from(JSON.stringify(patch)).toString('base64');
    }
  }
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** Where the CRDs' conversion webhook (ContainerRecreateRequest's) calls. */
export const CONVERSION_PATH = '/convert';

export interface WebhookServerOptions {
  host?: string | undefined;
  port: number;
  cert: string;
  key: string;
  handlers: ReadonlyMap<string, AdmissionHandler>;
  onReview?: (path: string, allowed: boolean) => void;
  logger?: Logger;
}

/**
 * The admission and conversion webhooks: HTTPS, AdmissionReview v1 at each handler's path,
 * ConversionReview v1 at CONVERSION_PATH. An admission handler that throws (a malformed object the
 * schema would reject later) answers a clear refusal instead of failing the request blindly.
 */
export async function serveWebhook(o: WebhookServerOptions): Promise<Server> {
  const log = o.logger ?? componentLogger('webhook');
  const server = createServer({ cert: o.cert, key: o.key }, (httpReq, res) => {
    const path = (httpReq.url ?? '/').split('?')[0] ?? '/';
    const handler = o.handlers.get(path);
    const send = (code: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (path === '/healthz') return send(200, { ok: true });
    const convert = path === CONVERSION_PATH;
    if ((!handler && !convert) || httpReq.method !== 'POST') return send(404, { error: `no webhook at ${httpReq.method} ${path}` });
    const chunks: Buffer[] = [];
    httpReq.on('data', (c: Buffer) => chunks.push(c));
    httpReq.on('error', () => res.destroy());
    httpReq.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(400, { error: 'body is not JSON' });
      }
      if (convert || !handler) return send(200, conversionResponse(body as ConversionReview));
      const review = body as AdmissionReview;
      const req = review.request;
      if (!req?.uid) return send(400, { error: 'not an AdmissionReview request' });
      handler(req)
        .catch((err: unknown): AdmissionResult<unknown> => {
          log.warn('admission handler failed', { path, operation: req.operation, name: req.name, namespace: req.namespace, ...errorFields(err) });
          return { allowed: false, code: 400, errors: [], message: `cannot admit ${req.name ?? 'object'}: ${(err as Error).message}` };
        })
        .then((result) => {
          o.onReview?.(path, result.allowed);
          if (!result.allowed) log.info('admission refused', { path, operation: req.operation, name: req.name, namespace: req.namespace, reason: result.message });
          send(200, reviewResponse(req, result));
        }, (err: unknown) => send(500, { error: String(err) }));
    });
  });
  // The API server keeps connections to webhooks idle for up to 90 s and reuses them; a server that
  // closes them sooner (Node's default is 5 s) races that reuse and the review fails with EOF.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new Error(`cannot listen on webhook port ${o.port}: ${err.message}`, { cause: err })));
    server.listen(o.port, o.host, resolve);
  });
  return server;
}
