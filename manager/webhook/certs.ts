import forge from 'node-forge';
import { ApiError } from '../../kube/rest.js';
import type { KubeObject } from '../../api/types/common.js';
import { core, Resource } from '../../kube/resource.js';
import type { RestClient } from '../../kube/rest.js';

export interface WebhookCerts {
  /** PEM of the CA the API server trusts (the webhook configurations' caBundle). */
  caCert: string;
  cert: string;
  key: string;
}

interface CertSecret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString('utf8');

const CERT_VALIDITY_YEARS = 10;

function serial(): string {
  return forge.util.bytesToHex(forge.random.getBytesSync(16)).replace(/^[89a-f]/, '1');
}

/** A CA and a serving certificate signed by it for `hosts` (DNS names and IP addresses). */
export function generateCerts(hosts: readonly string[]): WebhookCerts {
  const now = new Date();
  const notAfter = new Date(now.getTime() + CERT_VALIDITY_YEARS * 365 * 24 * 3600 * 1000);
  const caKeys = forge.pki.rsa.generateKeyPair(2048);
  const ca = forge.pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = serial();
  ca.validity.notBefore = new Date(now.getTime() - 3600_000);
  ca.validity.notAfter = notAfter;
  const caName = [{ name: 'commonName', value: 'kruise-ts-webhook-ca' }];
  ca.setSubject(caName);
  ca.setIssuer(caName);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  const keys = forge.pki.rsa.generateKeyPair(2048);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = ca.validity.notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: hosts[0] ?? 'kruise-webhook' }]);
  cert.setIssuer(caName);
  const isIp = (h: string): boolean => /^[\d.]+$/.test(h) || h.includes(':');
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: hosts.map((h) => (isIp(h) ? { type: 7, ip: h } : { type: 2, value: h })) },
  ]);
  cert.sign(caKeys.privateKey, forge.md.sha256.create());
  return { caCert: forge.pki.certificateToPem(ca), cert: forge.pki.certificateToPem(cert), key: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** True when `certs` still serve every host for at least 30 more days. */
function certsUsable(certs: WebhookCerts, hosts: readonly string[]): boolean {
  try {
    const c = forge.pki.certificateFromPem(certs.cert);
    if (c.validity.notAfter.getTime() - Date.now() < 30 * 24 * 3600 * 1000) return false;
    const san = c.getExtension('subjectAltName') as { altNames?: Array<{ value?: string; ip?: string }> } | null;
    const names = new Set((san?.altNames ?? []).map((a) => a.ip ?? a.value ?? ''));
    return hosts.every((h) => names.has(h)) && forge.pki.certificateFromPem(certs.caCert).verify(c);
  } catch {
    return false;
  }
}

/**
 * The webhook certificates every replica serves, kept in one Secret: the first replica generates
 * them, the others (and restarts) reuse them, so the caBundle stays valid for all of them.
 */
export async function ensureCerts(rest: RestClient, namespace: string, name: string, hosts: readonly string[]): Promise<WebhookCerts> {
  const secrets = new Resource<CertSecret>(rest, core.secrets);
  for (let attempt = 0; attempt < 5; attempt++) {
    let existing: CertSecret | undefined;
    try {
      existing = await secrets.get(namespace, name);
    } catch (err) {
      if (!(err instanceof ApiError && err.notFound)) throw err;
    }
    const stored: WebhookCerts | undefined = existing?.data
      ? { caCert: unb64(existing.data['ca.crt']), cert: unb64(existing.data['tls.crt']), key: unb64(existing.data['tls.key']) }
      : undefined;
    if (stored && certsUsable(stored, hosts)) return stored;
    const fresh = generateCerts(hosts);
    const data = { 'ca.crt': b64(fresh.caCert), 'tls.crt': b64(fresh.cert), 'tls.key': b64(fresh.key) };
    try {
      if (existing) await secrets.update({ ...existing, data });
      else await secrets.create({ metadata: { name, namespace }, type: 'Opaque', data });
      return fresh;
    } catch (err) {
      // Another replica wrote first: use what it stored.
      if (!(err instanceof ApiError && (err.conflict || err.alreadyExists))) throw err;
    }
  }
  throw new Error(`cannot settle the webhook certificates in secret ${namespace}/${name}`);
}
