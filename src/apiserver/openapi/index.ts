export { createOpenApiHandler, acceptsJson, negotiateOpenApiV2, openApiV2ProtobufType, type OpenApiHandler, type OpenApiHandlerOptions, type SwaggerFragment } from './openapi-handler.js';
export { convertGroupVersion, groupVersionsOf, groupVersionPathOf } from './openapi-v3.js';
export { builtinSwagger, patchMetaTable, openApiDataDir, type FieldMeta, type PatchMetaTable, type SwaggerDocument } from './openapi-data.js';
export { encodeOpenApiV2Proto } from './openapi-v2-proto.js';
