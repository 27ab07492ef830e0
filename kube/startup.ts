import { discoverKruise, type KruiseApi } from './kruise.js';
import { apiVersionOf, Resource, type ResourceType } from './resource.js';
import { ApiError, type RestClient } from './rest.js';

const ATTEMPTS = 5;

/** Retries `fn` a few times for a server that is still starting; turns the usual failures into instructions. */
async function withRetries<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ApiError && (err.forbidden || err.status === 401)) {
        throw new Error(`access to ${what} denied (${err.status} ${err.reason}): check the service account and RBAC from deploy/ (${err.message})`, { cause: err });
      }
      if (err instanceof ApiError && err.notFound) throw err;
      if (i >= ATTEMPTS) throw new Error(`cannot reach the Kubernetes API server: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 1000 * i));
    }
  }
}

/**
 * At start-up: the versions the cluster serves the OpenKruise kinds in (kube/kruise.ts), and that
 * this process may list the kinds in `needed`. A missing CRD or permission is an instruction, not
 * a stack trace.
 */
export async function startupKruiseApi(rest: RestClient, needed: ReadonlyArray<keyof KruiseApi>): Promise<KruiseApi> {
  const { api, missing } = await withRetries('the apps.kruise.io API', () => discoverKruise(rest));
  const absent = needed.map((k) => api[k]).filter((t) => missing.includes(t.kind));
  if (absent.length > 0) {
    throw new Error(
      `the ${absent.map((t) => t.kind).join(', ')} API is not installed in this cluster: install the CRDs first (kubectl apply -k deploy/, or kubectl apply -k deploy/crds/)`,
    );
  }
  for (const k of needed) await checkAccess(rest, api[k]);
  return api;
}

async function checkAccess(rest: RestClient, type: ResourceType): Promise<void> {
  const what = `${type.kind} (${apiVersionOf(type)})`;
  try {
    await withRetries(what, () => rest.request('GET', new Resource(rest, type).path(), { query: { limit: 1 }, timeoutMs: 10_000 }));
  } catch (err) {
    if (err instanceof ApiError && err.notFound) {
      throw new Error(`the ${what} API is not installed in this cluster: install the CRDs first (kubectl apply -k deploy/, or kubectl apply -k deploy/crds/)`, { cause: err });
    }
    throw err;
  }
}
