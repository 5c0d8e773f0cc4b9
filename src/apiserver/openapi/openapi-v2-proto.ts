/**
 * The OpenAPI v2 document as protobuf: gnostic's `openapi.v2.Document`
 * (OpenAPIv2.proto), the bytes kube-apiserver serves as
 * `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` and kubectl
 * reads for client-side validation.
 *
 * kube-apiserver (kube-openapi's handler.ToProtoBinary) parses its JSON
 * document with gnostic's `openapi_v2.ParseDocument` and marshals the result
 * with Go's proto.Marshal. This module produces the same bytes from the parsed
 * JSON, following gnostic's conversion (OpenAPIv2.go):
 *
 * - message fields in field-number order; proto3 zero values (empty strings,
 *   false, 0) left out, a present sub-object written even when empty;
 * - maps (definitions, properties, paths, responses, parameters, ...) become
 *   repeated Named* entries, and keys starting with `x-` become
 *   `vendor_extension` NamedAny entries whose `Any.yaml` holds the value as
 *   go-yaml text (see go-yaml.ts);
 * - map entries in Go's sorted key order: kube-apiserver marshals its JSON from
 *   Go maps with sorted keys and gnostic keeps document order, so the order of
 *   the JSON given here does not matter;
 * - oneofs resolved as gnostic resolves them for a valid document: a
 *   parameter or response with `$ref` is a JsonReference, a parameter is a body
 *   parameter or the non-body sub-schema its `in` names, a response schema of
 *   `type: file` is a FileSchema, `additionalProperties: <bool>` is the boolean.
 *
 * Keys gnostic does not know are skipped (gnostic would reject the whole
 * document; kube-apiserver never serves such a document).
 */
import { goNumberText, goStringCompare, goYamlJsonString, goYamlMarshal } from './go-yaml.js';
import { newProtoWriter, type ProtoWriter } from './proto-writer.js';

/** Encodes a swagger 2.0 document (parsed JSON) as an `openapi.v2.Document`. */
export function encodeOpenApiV2Proto(doc: Record<string, unknown>): Buffer {
  const w = newProtoWriter();
  document(w, doc);
  return w.finish();
}

type Obj = Record<string, unknown>;
/** Writes a message's fields (not its tag and length) from a JSON value. */
type MessageEncoder = (w: ProtoWriter, v: unknown) => void;
/** Writes field `no` from the JSON value `v` (undefined: the key is absent). */
type FieldEncoder = (w: ProtoWriter, no: number, v: unknown) => void;
/** [field number, JSON key, encoder]; the entry [n, '', ext] stands for the vendor extensions of the object. */
type FieldTable = [number, string, FieldEncoder][];

const asObj = (v: unknown): Obj => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const sortedKeys = (o: Obj): string[] => Object.keys(o).sort(goStringCompare);

/** The JSON text of an integer-valued number (go-yaml's !!int), or undefined for a float. */
function intText(n: number): string | undefined {
  const t = goNumberText(n);
  return /^-?[0-9]+$/.test(t) ? t : undefined;
}

/** gnostic's StringForScalarNode: strings, ints (their text) and null (''); undefined for anything else. */
function scalarString(v: unknown): string | undefined {
  if (typeof v === 'string') return goYamlJsonString(v);
  if (v === null) return '';
  if (typeof v === 'number') return intText(v);
  return undefined;
}

/** The value text of a scalar node (what a TypeItem keeps). */
function nodeValue(v: unknown): string | undefined {
  if (typeof v === 'string') return goYamlJsonString(v);
  if (typeof v === 'number') return goNumberText(v);
  if (typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  return undefined;
}

const str: FieldEncoder = (w, no, v) => {
  const s = v === undefined ? undefined : scalarString(v);
  if (s) w.string(no, s);
};

const bool: FieldEncoder = (w, no, v) => {
  if (v === true) w.bool(no, true);
};

/** gnostic's FloatForScalarNode takes any number; proto3 drops 0. */
const double: FieldEncoder = (w, no, v) => {
  if (typeof v === 'number' && v !== 0) w.double(no, v);
};

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** gnostic's IntForScalarNode takes only integers (go-yaml's !!int); proto3 drops 0. */
const int64: FieldEncoder = (w, no, v) => {
  if (typeof v !== 'number') return;
  const t = intText(v);
  if (t === undefined) return;
  const n = BigInt(t);
  if (n !== 0n && n >= int64Min && n <= int64Max) w.int64(no, n);
};

/** A repeated string: every element gnostic can read as a string, empty ones included. */
const strings: FieldEncoder = (w, no, v) => {
  if (!Array.isArray(v)) return;
  for (const item of v) {
    const s = scalarString(item);
    if (s !== undefined) w.string(no, s);
  }
};

function writeAny(w: ProtoWriter, no: number, v: unknown): void {
  w.begin(no);
  w.string(2, goYamlMarshal(v)); // Any.yaml; Any.value (google.protobuf.Any) stays unset
  w.end();
}

const any: FieldEncoder = (w, no, v) => {
  if (v !== undefined) writeAny(w, no, v);
};

const anys: FieldEncoder = (w, no, v) => {
  if (Array.isArray(v)) for (const item of v) writeAny(w, no, item);
};

/** A singular message field, present whenever the key is. */
const message =
  (enc: MessageEncoder): FieldEncoder =>
  (w, no, v) => {
    if (v === undefined) return;
    w.begin(no);
    enc(w, v);
    w.end();
  };

/** A repeated message field from a JSON array. */
const messages =
  (enc: MessageEncoder): FieldEncoder =>
  (w, no, v) => {
    if (!Array.isArray(v)) return;
    for (const item of v) {
      w.begin(no);
      enc(w, item);
      w.end();
    }
  };

/** One Named* entry: name = 1 (the map key), value = 2. */
function named(w: ProtoWriter, no: number, key: string, value: () => void): void {
  w.begin(no);
  const name = goYamlJsonString(key);
  if (name) w.string(1, name);
  value();
  w.end();
}

/** The vendor extensions (keys starting with `x-`) of `o` as NamedAny entries. */
function extensions(w: ProtoWriter, no: number, o: Obj): void {
  for (const k of sortedKeys(o)) if (k.startsWith('x-')) named(w, no, k, () => writeAny(w, 2, o[k]));
}

/** A map whose values are messages: repeated Named* entries in field `no`. */
const namedMessages =
  (enc: MessageEncoder, keep: (k: string) => boolean = () => true) =>
  (w: ProtoWriter, no: number, o: Obj): void => {
    for (const k of sortedKeys(o)) if (keep(k)) named(w, no, k, () => message(enc)(w, 2, o[k]));
  };

/** A message that is only a map (Definitions, Properties, Headers, ...): its entries in field 1. */
const mapMessage = (value: (w: ProtoWriter, no: number, o: Obj) => void): MessageEncoder => (w, v) => value(w, 1, asObj(v));

function fields(table: FieldTable): MessageEncoder {
  return (w, v) => {
    const o = asObj(v);
    for (const [no, key, enc] of table) {
      if (key === '') extensions(w, no, o);
      else enc(w, no, o[key]);
    }
  };
}

/** Marks the vendor-extension field of a table; `fields` writes it with `extensions`. */
const ext: FieldEncoder = () => {};

// The messages of OpenAPIv2.proto. The recursive ones (Schema,
// PrimitivesItems) are function declarations, so that tables can refer to
// them before their own tables exist.

const externalDocs = fields([[1, 'description', str], [2, 'url', str], [3, '', ext]]);
const xml = fields([[1, 'name', str], [2, 'namespace', str], [3, 'prefix', str], [4, 'attribute', bool], [5, 'wrapped', bool], [6, '', ext]]);
const jsonReference = fields([[1, '$ref', str], [2, 'description', str]]);
const contact = fields([[1, 'name', str], [2, 'url', str], [3, 'email', str], [4, '', ext]]);
const license = fields([[1, 'name', str], [2, 'url', str], [3, '', ext]]);
const info = fields([[1, 'title', str], [2, 'version', str], [3, 'description', str], [4, 'termsOfService', str], [5, 'contact', message(contact)], [6, 'license', message(license)], [7, '', ext]]);
const tag = fields([[1, 'name', str], [2, 'description', str], [3, 'externalDocs', message(externalDocs)], [4, '', ext]]);

/** TypeItem: `type` as one string or a list of them. */
const typeItem: MessageEncoder = (w, v) => {
  for (const item of Array.isArray(v) ? v : [v]) {
    const s = nodeValue(item);
    if (s !== undefined) w.string(1, s);
  }
};

function schema(w: ProtoWriter, v: unknown): void {
  schemaFields(w, v);
}

/** ItemsItem: gnostic reads `items` as one schema (a list reads as an empty schema). */
const itemsItem: MessageEncoder = (w, v) => message(schema)(w, 1, v);

/** AdditionalPropertiesItem: a boolean (kept even when false: it is a oneof) or a schema. */
const additionalPropertiesItem: MessageEncoder = (w, v) => {
  if (typeof v === 'boolean') w.bool(2, v);
  else message(schema)(w, 1, v);
};

const properties = mapMessage(namedMessages(schema));

const schemaFields = fields([
  [1, '$ref', str],
  [2, 'format', str],
  [3, 'title', str],
  [4, 'description', str],
  [5, 'default', any],
  [6, 'multipleOf', double],
  [7, 'maximum', double],
  [8, 'exclusiveMaximum', bool],
  [9, 'minimum', double],
  [10, 'exclusiveMinimum', bool],
  [11, 'maxLength', int64],
  [12, 'minLength', int64],
  [13, 'pattern', str],
  [14, 'maxItems', int64],
  [15, 'minItems', int64],
  [16, 'uniqueItems', bool],
  [17, 'maxProperties', int64],
  [18, 'minProperties', int64],
  [19, 'required', strings],
  [20, 'enum', anys],
  [21, 'additionalProperties', message(additionalPropertiesItem)],
  [22, 'type', message(typeItem)],
  [23, 'items', message(itemsItem)],
  [24, 'allOf', messages(schema)],
  [25, 'properties', message(properties)],
  [26, 'discriminator', str],
  [27, 'readOnly', bool],
  [28, 'xml', message(xml)],
  [29, 'externalDocs', message(externalDocs)],
  [30, 'example', any],
  [31, '', ext],
]);

const fileSchemaKeys = new Set(['default', 'description', 'example', 'externalDocs', 'format', 'readOnly', 'required', 'title', 'type']);
const fileSchema = fields([
  [1, 'format', str],
  [2, 'title', str],
  [3, 'description', str],
  [4, 'default', any],
  [5, 'required', strings],
  [6, 'type', str],
  [7, 'readOnly', bool],
  [8, 'externalDocs', message(externalDocs)],
  [9, 'example', any],
  [10, '', ext],
]);

/** SchemaItem: a FileSchema when gnostic's FileSchema accepts it (`type: file`, only its keys), else a Schema. */
const schemaItem: MessageEncoder = (w, v) => {
  const o = asObj(v);
  const isFile = o.type === 'file' && Object.keys(o).every((k) => k.startsWith('x-') || fileSchemaKeys.has(k));
  if (isFile) message(fileSchema)(w, 2, o);
  else message(schema)(w, 1, v);
};

/** The validation fields shared by PrimitivesItems, Header and the non-body parameters, numbered from `first`. */
function primitiveFields(first: number, items: FieldEncoder): FieldTable {
  const keys: [string, FieldEncoder][] = [
    ['type', str],
    ['format', str],
    ['items', items],
    ['collectionFormat', str],
    ['default', any],
    ['maximum', double],
    ['exclusiveMaximum', bool],
    ['minimum', double],
    ['exclusiveMinimum', bool],
    ['maxLength', int64],
    ['minLength', int64],
    ['pattern', str],
    ['maxItems', int64],
    ['minItems', int64],
    ['uniqueItems', bool],
    ['enum', anys],
    ['multipleOf', double],
  ];
  return keys.map(([key, enc], i) => [first + i, key, enc]);
}

function primitivesItems(w: ProtoWriter, v: unknown): void {
  primitivesItemsFields(w, v);
}
const primitivesItemsFields = fields([...primitiveFields(1, message(primitivesItems)), [18, '', ext]]);

const header = fields([...primitiveFields(1, message(primitivesItems)), [18, 'description', str], [19, '', ext]]);

/** Header, path: required, in, description, name, then the primitive fields. */
const headerOrPathParameter = fields([[1, 'required', bool], [2, 'in', str], [3, 'description', str], [4, 'name', str], ...primitiveFields(5, message(primitivesItems)), [22, '', ext]]);
/** Query, formData: also allowEmptyValue, before the primitive fields. */
const queryOrFormDataParameter = fields([
  [1, 'required', bool],
  [2, 'in', str],
  [3, 'description', str],
  [4, 'name', str],
  [5, 'allowEmptyValue', bool],
  ...primitiveFields(6, message(primitivesItems)),
  [23, '', ext],
]);

const bodyParameter = fields([[1, 'description', str], [2, 'name', str], [3, 'in', str], [4, 'required', bool], [5, 'schema', message(schema)], [6, '', ext]]);

const nonBodyField: Record<string, [number, MessageEncoder]> = {
  header: [1, headerOrPathParameter],
  formData: [2, queryOrFormDataParameter],
  query: [3, queryOrFormDataParameter],
  path: [4, headerOrPathParameter],
};

/** NonBodyParameter: the sub-schema named by `in` (gnostic's enum check on `in` picks exactly one). */
const nonBodyParameter: MessageEncoder = (w, v) => {
  const sub = nonBodyField[String(asObj(v).in)];
  if (sub) message(sub[1])(w, sub[0], v);
};

const parameter: MessageEncoder = (w, v) => {
  if (asObj(v).in === 'body') message(bodyParameter)(w, 1, v);
  else message(nonBodyParameter)(w, 2, v);
};

/** ParametersItem and ResponseValue: an object with `$ref` is a JsonReference (gnostic's last matching alternative). */
const orReference =
  (enc: MessageEncoder): MessageEncoder =>
  (w, v) => {
    if ('$ref' in asObj(v)) message(jsonReference)(w, 2, v);
    else message(enc)(w, 1, v);
  };

const parametersItem = orReference(parameter);

/** Examples (and any map of arbitrary values): NamedAny entries. */
const anyMap = mapMessage((w, no, o) => {
  for (const k of sortedKeys(o)) named(w, no, k, () => writeAny(w, 2, o[k]));
});

const response = fields([
  [1, 'description', str],
  [2, 'schema', message(schemaItem)],
  [3, 'headers', message(mapMessage(namedMessages(header)))],
  [4, 'examples', message(anyMap)],
  [5, '', ext],
]);

const responseCode = /^([0-9]{3})$|^(default)$/;

/** Responses: status codes (and `default`) in field 1, vendor extensions in field 2. */
const responses: MessageEncoder = (w, v) => {
  const o = asObj(v);
  namedMessages(orReference(response), (k) => responseCode.test(k))(w, 1, o);
  extensions(w, 2, o);
};

const securityRequirement = mapMessage((w, no, o) => {
  for (const k of sortedKeys(o)) {
    named(w, no, k, () => {
      w.begin(2); // StringArray: gnostic keeps every element, '' for a non-string
      for (const item of Array.isArray(o[k]) ? (o[k] as unknown[]) : []) w.string(1, scalarString(item) ?? '');
      w.end();
    });
  }
});

const operation = fields([
  [1, 'tags', strings],
  [2, 'summary', str],
  [3, 'description', str],
  [4, 'externalDocs', message(externalDocs)],
  [5, 'operationId', str],
  [6, 'produces', strings],
  [7, 'consumes', strings],
  [8, 'parameters', messages(parametersItem)],
  [9, 'responses', message(responses)],
  [10, 'schemes', strings],
  [11, 'deprecated', bool],
  [12, 'security', messages(securityRequirement)],
  [13, '', ext],
]);

const pathItem = fields([
  [1, '$ref', str],
  [2, 'get', message(operation)],
  [3, 'put', message(operation)],
  [4, 'post', message(operation)],
  [5, 'delete', message(operation)],
  [6, 'options', message(operation)],
  [7, 'head', message(operation)],
  [8, 'patch', message(operation)],
  [9, 'parameters', messages(parametersItem)],
  [10, '', ext],
]);

/** Paths: vendor extensions in field 1, the `/...` keys in field 2. */
const paths: MessageEncoder = (w, v) => {
  const o = asObj(v);
  extensions(w, 1, o);
  namedMessages(pathItem, (k) => k.startsWith('/'))(w, 2, o);
};

const oauth2Scopes = mapMessage((w, no, o) => {
  for (const k of sortedKeys(o)) named(w, no, k, () => str(w, 2, o[k]));
});

const basicSecurity = fields([[1, 'type', str], [2, 'description', str], [3, '', ext]]);
const apiKeySecurity = fields([[1, 'type', str], [2, 'name', str], [3, 'in', str], [4, 'description', str], [5, '', ext]]);
const oauth2Head: FieldTable = [[1, 'type', str], [2, 'flow', str], [3, 'scopes', message(oauth2Scopes)]];
const oauth2Implicit = fields([...oauth2Head, [4, 'authorizationUrl', str], [5, 'description', str], [6, '', ext]]);
const oauth2TokenOnly = fields([...oauth2Head, [4, 'tokenUrl', str], [5, 'description', str], [6, '', ext]]);
const oauth2AccessCode = fields([...oauth2Head, [4, 'authorizationUrl', str], [5, 'tokenUrl', str], [6, 'description', str], [7, '', ext]]);
const oauth2Flows: Record<string, [number, MessageEncoder]> = {
  implicit: [3, oauth2Implicit],
  password: [4, oauth2TokenOnly],
  application: [5, oauth2TokenOnly],
  accessCode: [6, oauth2AccessCode],
};

/** SecurityDefinitionsItem: chosen by `type` (and `flow` for oauth2), as gnostic's enum checks do. */
const securityDefinitionsItem: MessageEncoder = (w, v) => {
  const o = asObj(v);
  if (o.type === 'basic') message(basicSecurity)(w, 1, o);
  else if (o.type === 'apiKey') message(apiKeySecurity)(w, 2, o);
  else if (o.type === 'oauth2') {
    const flow = oauth2Flows[String(o.flow)];
    if (flow) message(flow[1])(w, flow[0], o);
  }
};

const document = fields([
  [1, 'swagger', str],
  [2, 'info', message(info)],
  [3, 'host', str],
  [4, 'basePath', str],
  [5, 'schemes', strings],
  [6, 'consumes', strings],
  [7, 'produces', strings],
  [8, 'paths', message(paths)],
  [9, 'definitions', message(properties)],
  [10, 'parameters', message(mapMessage(namedMessages(parameter)))],
  [11, 'responses', message(mapMessage(namedMessages(response)))],
  [12, 'security', messages(securityRequirement)],
  [13, 'securityDefinitions', message(mapMessage(namedMessages(securityDefinitionsItem)))],
  [14, 'tags', messages(tag)],
  [15, 'externalDocs', message(externalDocs)],
  [16, '', ext],
]);
