import { covers } from '../../kube/covers.js';
import { deployWebhookConfigurations } from '../../manager/webhook/configurations.js';

/** The object as the API server answers a GET: keys in its own (sorted) order, defaults filled in. */
function asServed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(asServed);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, asServed(x)]));
}
const withDefaults = (hook: Record<string, unknown>): Record<string, unknown> => ({ ...hook, namespaceSelector: {}, objectSelector: {}, reinvocationPolicy: 'Never' });

describe('covers: the fields a writer sets, as the API server serves them back', () => {
  const desired = deployWebhookConfigurations().mutating.webhooks ?? [];
  const served = asServed(desired.map(withDefaults)) as Array<Record<string, unknown>>;

  it('holds for the configuration the manager wrote, whatever the key order and the defaults', () => {
    // What the manager compared before: every resync (each minute) updated the unchanged objects.
    expect(JSON.stringify(served)).not.toBe(JSON.stringify(desired));
    expect(covers(served, desired)).toBe(true);
  });

  it('fails on a changed value, a missing field or hook, and an extra hook', () => {
    const changed = structuredClone(served);
    (changed[0] as { timeoutSeconds: number }).timeoutSeconds = 30;
    expect(covers(changed, desired)).toBe(false);
    const noRules = structuredClone(served);
    delete noRules[1]?.['rules'];
    expect(covers(noRules, desired)).toBe(false);
    expect(covers(served.slice(1), desired)).toBe(false);
    expect(covers([...served, served[0]], desired)).toBe(false);
  });

  it('compares a CA, a Service and a URL target as values', () => {
    const service = { caBundle: 'Q0E=', service: { namespace: 'kruise-ts-system', name: 'kruise-ts-webhook-service', port: 443, path: '/convert' } };
    expect(covers(asServed(service), service)).toBe(true);
    expect(covers({ ...service, caBundle: 'b3RoZXI=' }, service)).toBe(false);
    expect(covers({ caBundle: 'Q0E=', url: 'https://10.0.0.1:9876/convert' }, service)).toBe(false);
    expect(covers(undefined, service)).toBe(false);
    expect(covers(null, { a: 1 })).toBe(false);
    expect(covers([1], { 0: 1 })).toBe(false);
  });
});
