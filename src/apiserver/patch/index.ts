export { applyPatch, customResourcePatchTypes, type PatchType, type PatchOptions } from './apply-patch.js';
export { applyJsonPatch, decodeJsonPatch, parsePointer, type JsonPatchOperation } from './json-patch.js';
export { applyMergePatch } from './merge-patch.js';
export { applyStrategicMergePatch } from './strategic-merge.js';
export { schemaForKind, type SchemaNode } from './schema.js';
export { serverSideApply, recordUpdate, defaultFieldManager, type ApplyOptions } from './server-side-apply.js';
export { fieldSetOf, toFieldsV1, fromFieldsV1, displayPath, type FieldSet } from './field-set.js';
