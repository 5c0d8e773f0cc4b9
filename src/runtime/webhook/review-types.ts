/**
 * The wire types of admission and conversion webhooks
 * (admission.k8s.io/v1 AdmissionReview, apiextensions.k8s.io/v1
 * ConversionReview), which kubernetes-types does not include.
 */
import type { Status } from 'kubernetes-types/meta/v1.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKindRef {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResourceRef {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What the API server asks: admission.k8s.io AdmissionRequest. */
export interface AdmissionRequest<T = unknown> {
  uid: string;
  kind: GroupVersionKindRef;
  resource: GroupVersionResourceRef;
  subResource?: string;
  requestKind?: GroupVersionKindRef;
  requestResource?: GroupVersionResourceRef;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: AdmissionUserInfo;
  /** The object being written (absent on DELETE). */
  object?: T;
  /** The object before (UPDATE, DELETE). */
  oldObject?: T;
  dryRun?: boolean;
  /** CreateOptions, UpdateOptions, DeleteOptions or PatchOptions. */
  options?: Record<string, unknown>;
}

/** What a webhook answers: admission.k8s.io AdmissionResponse. */
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: Status;
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

export interface AdmissionReview<T = unknown> {
  apiVersion: 'admission.k8s.io/v1' | 'admission.k8s.io/v1beta1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest<T>;
  response?: AdmissionResponse;
}

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: Record<string, unknown>[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: Record<string, unknown>[];
  result: Status;
}

export interface ConversionReview {
  apiVersion: 'apiextensions.k8s.io/v1' | 'apiextensions.k8s.io/v1beta1';
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}
