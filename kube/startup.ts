import { ApiError, type RestClient } from './rest.js';

const ATTEMPTS = 5;

/**
 * Checks at start-up that the API server answers and serves `path` (a CRD's collection), and turns
 * the usual failures into instructions. Retries a few times for a server that is still starting.
 */
export async function checkApiAccess(rest: RestClient, path: string, what: string): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await rest.request('GET', path, { query: { limit: 1 }, timeoutMs: 10_000 });
      return;
    } catch (err) {
      if (err instanceof ApiError && err.notFound) {
        throw new Error(`the ${what} API is not installed in this cluster: install the CRDs first (kubectl apply -k deploy/, or kubectl apply -f deploy/crds/)`, { cause: err });
      }
      if (err instanceof ApiError && (err.forbidden || err.status === 401)) {
        throw new Error(`access to ${what} denied (${err.status} ${err.reason}): check the service account and RBAC from deploy/ (${err.message})`, { cause: err });
      }
      if (i >= ATTEMPTS) throw new Error(`cannot reach the Kubernetes API server: ${(err as Error).message}`, { cause: err });
      await new Promise((r) => setTimeout(r, 1000 * i));
    }
  }
}
