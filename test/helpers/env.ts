import { readFileSync } from 'node:fs';

export interface TestEnv {
  envDir: string;
  criSocket: string;
  containerdDir: string;
  registryOpen: string;
  registryAuth: string;
  registryUser: string;
  registryPassword: string;
  pauseImage: string;
  manyImages: number;
}

export function testEnv(): TestEnv {
  const path = process.env['KRUISE_TS_ENV_JSON'];
  if (!path) throw new Error('KRUISE_TS_ENV_JSON is not set: run the integration project through jest (global setup)');
  return JSON.parse(readFileSync(path, 'utf8')) as TestEnv;
}

/** Digest of a manifest as the registry serves it. */
export async function registryDigest(registry: string, repo: string, tag: string, auth?: string): Promise<string> {
  const headers: Record<string, string> = { Accept: 'application/vnd.oci.image.manifest.v1+json' };
  if (auth) headers['Authorization'] = `Basic ${Buffer.from(auth).toString('base64')}`;
  const res = await fetch(`http://${registry}/v2/${repo}/manifests/${tag}`, { method: 'HEAD', headers });
  const digest = res.headers.get('docker-content-digest');
  if (!res.ok || !digest) throw new Error(`no digest for ${registry}/${repo}:${tag}: HTTP ${res.status}`);
  return digest;
}
