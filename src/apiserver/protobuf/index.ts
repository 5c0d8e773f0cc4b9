export { decodeKubernetesProtobuf, hasProtobufMagic, messageNameFor, protobufMagic, protobufMediaType, readEnvelope } from './envelope.js';
export type { UnknownEnvelope } from './envelope.js';
export { ProtoDecodeError, formatGoDuration, formatTime, messageToJson, wellKnown } from './to-json.js';
export { FieldFlag, messageSpec, protoSchema, schemaFile, setProtoSchemaForTest } from './schema.js';
export type { FieldSpec, FieldType, MessageSpec, ProtoSchema, ScalarType } from './schema.js';
export { WireError, WireReader, WireType, readFields, toInt32, toInt64, toUint64, zigzag32, zigzag64 } from './wire.js';
export type { Varint, WireField } from './wire.js';
