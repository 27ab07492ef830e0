// The CRD conversion webhook (ConversionReview v1, apiextensions.k8s.io): the API server sends the
// objects it holds in one apps.kruise.io version and asks for another. Only ContainerRecreateRequest
// differs between v1alpha1 and v1beta1 in more than its apiVersion (api/crr-conversion.ts).
import { crrToV1alpha1, crrToV1beta1 } from '../../api/crr-conversion.js';
import { API_VERSION_V1ALPHA1, API_VERSION_V1BETA1, KIND_CONTAINER_RECREATE_REQUEST } from '../../api/group-version.js';
import type { KubeObject } from '../../api/types/common.js';
import type { ContainerRecreateRequest } from '../../api/types/containerrecreaterequest.js';

export interface ConversionReview {
  apiVersion?: string;
  kind?: string;
  request?: { uid?: string; desiredAPIVersion?: string; objects?: unknown[] };
}

function isObject(v: unknown): v is KubeObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function convertOne(obj: KubeObject, desired: string): KubeObject {
  if (obj.kind !== KIND_CONTAINER_RECREATE_REQUEST) return { ...obj, apiVersion: desired };
  return desired === API_VERSION_V1BETA1 ? crrToV1beta1(obj as ContainerRecreateRequest) : crrToV1alpha1(obj as ContainerRecreateRequest);
}

/** The ConversionReview response for a request: every object converted, or a failure saying why. */
export function conversionResponse(review: ConversionReview): Record<string, unknown> {
  const uid = review.request?.uid ?? '';
  const desired = review.request?.desiredAPIVersion ?? '';
  const out = (response: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid, ...response } });
  if (desired !== API_VERSION_V1ALPHA1 && desired !== API_VERSION_V1BETA1) {
    return out({ convertedObjects: [], result: { status: 'Failure', message: `cannot convert to ${desired || 'an empty apiVersion'}: only ${API_VERSION_V1ALPHA1} and ${API_VERSION_V1BETA1}` } });
  }
  const objects = review.request?.objects ?? [];
  const bad = objects.findIndex((o) => !isObject(o));
  if (bad >= 0) return out({ convertedObjects: [], result: { status: 'Failure', message: `object ${bad} is not an object` } });
  return out({ convertedObjects: (objects as KubeObject[]).map((o) => convertOne(o, desired)), result: { status: 'Success' } });
}
