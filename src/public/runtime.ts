/**
 * kcm/runtime: write your own controllers and operators (controller-runtime
 * for TypeScript). A manager owns a shared cache, a client that reads from
 * it, leader election, events, health probes and metrics; the builder wires
 * a reconcile function to the kinds it watches.
 *
 *   const mgr = newManager({ name: 'widget-operator', restConfig: await getConfig() });
 *   controller(mgr).for(Widget).owns(kinds.Deployment).complete(async (ctx, req) => {
 *     const widget = await ctx.get();
 *     if (!widget) return;                      // deleted: owned objects go with it
 *     ...                                       // compute, compare, act, write status
 *   });
 *   await mgr.start();
 *
 * See docs/runtime.md for the whole API and how it maps to controller-runtime.
 */
export {
  newManager,
  setupSignalHandler,
  DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_MS,
  type Manager,
  type ManagerOptions,
  type ManagerCacheOptions,
  type LeaderElectionOptions,
  type Runnable,
} from '../runtime/manager.js';
export { getConfig, type GetConfigOptions } from '../runtime/config.js';
export { controller, type Builder, type BuilderStart, type ForOptions, type OwnsOptions, type WatchesOptions } from '../runtime/builder.js';
export type { Request, Result, ReconcileContext, ReconcileFunc, Reconciler, ControllerOptions, RuntimeController } from '../runtime/controller.js';
export {
  defineResource,
  customResourceDefinition,
  pluralize,
  type CustomObject,
  type ResourceDefinition,
  type ResourceSpec,
  type PrinterColumn,
  type ValidationRule,
} from '../runtime/resource.js';
export {
  toStructuralSchema,
  intOrString,
  quantity,
  preserveUnknownFields,
  embeddedResource,
  listMap,
  listSet,
  conditions,
  SchemaConversionError,
  type SchemaCondition,
  type JSONSchemaProps,
} from '../runtime/schema.js';
export { generateTypes, type GenerateTypesOptions } from '../runtime/crd-types.js';
/** TypeBox, the schema builder of defineResource (https://github.com/sinclairzx81/typebox). */
export { Type, type Static, type TSchema } from 'typebox';
export { kinds, defineKind, metadataOnly, type ResourceKind, type RuntimeObject, type PartialObjectMetadata, type ObjectOf, type KindSpec } from '../runtime/kinds.js';
export {
  generationChanged,
  labelsChanged,
  annotationsChanged,
  resourceVersionChanged,
  objectMatches,
  and,
  or,
  not,
  type ObjectEvent,
  type Predicate,
} from '../runtime/predicates.js';
export {
  setStatusCondition,
  findStatusCondition,
  removeStatusCondition,
  isStatusConditionTrue,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  validateCondition,
  InvalidConditionError,
  type Condition,
  type ConditionStatus,
  type NewCondition,
  type ConditionHolder,
} from '../runtime/conditions.js';
export {
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  getControllerOf,
  isControlledBy,
  hasFinalizer,
  addFinalizer,
  removeFinalizer,
  isBeingDeleted,
  AlreadyOwnedError,
  type OwnerReferenceOptions,
} from '../runtime/ownership.js';
export { createOrUpdate, createOrPatch, ensureFinalizer, type Operation, type OperationResult, type FinalizerState } from '../runtime/helpers.js';
export {
  ignoreNotFound,
  type RuntimeClient,
  type Reader,
  type LiveReader,
  type WriteOptions,
  type ApplyOptions,
  type DeleteOptions,
  type LiveListOptions,
} from '../runtime/client.js';
export { mergeFrom, createMergePatch, type Patch, type RawPatch, type MergeFromPatch } from '../runtime/patch.js';
export { DEFAULT_SYNC_PERIOD_MS, type RuntimeCache, type ObjectKey, type CacheListOptions, type KindCacheOptions, type HandlerRegistration } from '../runtime/cache.js';
export { TerminalError, isTerminalError, UncachedKindError, LeaderElectionLostError } from '../runtime/errors.js';
export { newWebhookServer, type WebhookServer, type WebhookServerOptions } from '../runtime/webhook/server.js';
export {
  defaultingWebhook,
  validatingWebhook,
  denied,
  errored,
  type AdmissionHandler,
  type AdmissionContext,
  type Validator,
  type Defaulter,
  type Warnings,
} from '../runtime/webhook/admission.js';
export { conversionWebhook, type Converter, type ConversionHandler } from '../runtime/webhook/conversion.js';
export { webhookConfigurations, type WebhookSpec, type WebhookTarget, type WebhookConfigurationsOptions } from '../runtime/webhook/configurations.js';
export { createJsonPatch, type JsonPatchOperation } from '../runtime/webhook/json-patch-diff.js';
export type {
  AdmissionReview,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionUserInfo,
  ConversionReview,
  ConversionRequest,
  ConversionResponse,
  Operation as AdmissionOperation,
  GroupVersionKindRef,
  GroupVersionResourceRef,
} from '../runtime/webhook/review-types.js';
export { StatusError, newStatus, isNotFound, isAlreadyExists, isConflict, isInvalid } from '../client/errors.js';
export type { EventRecorder, EventType } from '../tools/record/interfaces.js';
export { newLogger, setVerbosity, setLogFormat, setLogOutput, type Logger, type LogFields, type LogFormat } from '../util/log/logger.js';
export type { RestConfig } from '../client/rest-config.js';
export type { Client } from '../client/interfaces.js';
export type { Clock } from '../util/clock/clock.js';
