/**
 * Kubernetes protobuf (`application/vnd.kubernetes.protobuf`) for the
 * built-in kinds, driven by data/proto/schema.json.gz.
 *
 * Decoding (request bodies): envelope.ts reads `k8s\0` + runtime.Unknown,
 * to-json.ts turns the message into the JSON the client meant (zero values
 * of non-pointer fields dropped, pointers kept; see its header).
 * Encoding (responses): to-proto.ts writes the bytes gogo's generated
 * Marshal writes for the Go struct the JSON decodes to (checked byte for
 * byte against Go), envelope.ts wraps them, watch-event.ts frames watch
 * events; negotiate.ts chooses JSON or protobuf from Accept as
 * kube-apiserver does.
 */
export {
  decodeKubernetesProtobuf, encodeKubernetesProtobuf, hasProtobufMagic, messageNameFor, messageOf, protobufMagic, protobufMediaType, readEnvelope, writeEnvelope,
} from './envelope.js';
export type { UnknownEnvelope } from './envelope.js';
export { ProtoDecodeError, formatGoDuration, formatTime, messageToJson, wellKnown } from './to-json.js';
export { ProtoEncodeError, jsonToMessage, parseGoDuration, parseRfc3339, writeMessageBody } from './to-proto.js';
export { decodeWatchEventFrame, encodeWatchEventFrame, protobufWatchMediaType, splitFrames } from './watch-event.js';
export { negotiateMedia, notAcceptableMessage } from './negotiate.js';
export { parseAccept } from '../accept.js';
export type { Encoding, MediaChoice, NegotiationTarget, Rendering } from './negotiate.js';
export { FieldFlag, isSliceMessage, messageSpec, protoSchema, schemaFile, setProtoSchemaForTest } from './schema.js';
export type { FieldSpec, FieldType, MessageSpec, ProtoSchema, ScalarType } from './schema.js';
export { WireError, WireReader, WireType, readFields, toInt32, toInt64, toUint64, zigzag32, zigzag64 } from './wire.js';
export type { Varint, WireField } from './wire.js';
export { ReverseWriter } from './writer.js';
