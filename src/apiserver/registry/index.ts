export { strategyFor, hasStrategy, selectableFields } from './strategy.js';
export type { Strategy, ScaleAccess, Scale, FieldError } from './strategy.js';
export { podQOSClass, podGracePeriod, podUpdateForbiddenMessage } from './pods.js';
export { defaultImagePullPolicy } from './pod-spec.js';
export { prepareForNamespaceFinalize } from './core.js';
export { generateJobSelector } from './batch.js';
