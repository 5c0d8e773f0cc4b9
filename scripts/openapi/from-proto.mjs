/**
 * Brings the OpenAPI v2 definitions up to the protobuf schema of current
 * Kubernetes (data/proto/schema.json.gz, see src/apiserver/protobuf/schema.ts):
 * every definition that has a protobuf message (`io.k8s.api.core.v1.PodSpec`
 * <-> `k8s.io.api.core.v1.PodSpec`) gets every JSON field the message has, and
 * every message of the API groups without a definition gets one, with
 * `x-kubernetes-group-version-kind` when it is a top-level kind.
 *
 * Existing properties are never changed (their descriptions and patch
 * metadata are upstream's); only missing ones are added. Descriptions come
 * from `docs` (kubernetes-types, see kubernetes-types-docs.mjs) when it knows
 * the field, else NO_DESCRIPTION.
 *
 * mergeProtoSchema({ doc, proto, docs, groupOf }) -> { addedFields, addedDefinitions, unknownInProto, retargeted,
 * missingMessages }: string[] each (unknownInProto: properties the messages lack, now removed;
 * retargeted: refs moved to a renamed type; missingMessages: referenced but absent from the schema).
 */

export const NO_DESCRIPTION = '(no description: added from the Kubernetes 1.32 types)';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
/**
 * Messages not to define: packages with no OpenAPI counterpart in kube-apiserver's document, and
 * storage.k8s.io/v1beta1's messages, which the kubectl v1.32 extraction files under
 * admissionregistration/v1alpha1 (their references to storage.v1beta1 do not resolve).
 */
const SKIPPED = [
  /^k8s\.io\.metrics\./, /^k8s\.io\.api\.apidiscovery\./, /^k8s\.io\.api\.imagepolicy\./, /^k8s\.io\.api\.admission\./, /^k8s\.io\.apimachinery\./,
  /^k8s\.io\.api\.admissionregistration\.v1alpha1\.(CSI|StorageClass|TokenRequest|VolumeAttachment|VolumeAttributesClass|VolumeError|VolumeNodeResources)/,
  // Versions no longer served (apps/v1beta1, v1beta2, extensions/v1beta1: 1.16; flowcontrol v1beta1, v1beta2: 1.26, 1.29).
  /^k8s\.io\.api\.(apps\.v1beta[12]|extensions\.v1beta1|flowcontrol\.v1beta[12])\./,
  // Internal or query-parameter types kube-apiserver does not publish (autoscaling/v1's metric types ride in annotations).
  /^k8s\.io\.api\.autoscaling\.v1\./,
  /^k8s\.io\.api\.core\.v1\.(List|RangeAllocation|SerializedReference|PodSignature|AvoidPods|PreferAvoidPodsEntry|PodStatusResult|Preconditions|(Pod(Attach|Exec|Log|PortForward|Proxy)|NodeProxy|ServiceProxy)Options)$/,
];

/** Messages with their own JSON form: the schema to use for a field of that type. */
const SPECIAL = {
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time': { $ref: `#/definitions/${META}.Time` },
  'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime': { $ref: `#/definitions/${META}.MicroTime` },
  'k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': { $ref: `#/definitions/${META}.FieldsV1` },
  'k8s.io.apimachinery.pkg.apis.meta.v1.Duration': { type: 'string' },
  'k8s.io.apimachinery.pkg.api.resource.Quantity': { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue': { $ref: '#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity' },
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': { $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString' },
  'k8s.io.apimachinery.pkg.runtime.RawExtension': { $ref: '#/definitions/io.k8s.apimachinery.pkg.runtime.RawExtension' },
};

const SCALARS = {
  string: { type: 'string' },
  enum: { type: 'string' },
  bool: { type: 'boolean' },
  bytes: { type: 'string', format: 'byte' },
  int32: { type: 'integer', format: 'int32' },
  sint32: { type: 'integer', format: 'int32' },
  sfixed32: { type: 'integer', format: 'int32' },
  uint32: { type: 'integer', format: 'int32' },
  fixed32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  sint64: { type: 'integer', format: 'int64' },
  sfixed64: { type: 'integer', format: 'int64' },
  uint64: { type: 'integer', format: 'int64' },
  fixed64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  float: { type: 'number', format: 'float' },
};

const REPEATED = 1;
const INLINE = 4;
const SLICE_WRAPPER = 8;

/** `k8s.io.api.core.v1.PodSpec` -> `io.k8s.api.core.v1.PodSpec`. */
export function definitionNameOf(message) {
  return message.startsWith('k8s.io.') ? `io.k8s.${message.slice('k8s.io.'.length)}` : message;
}
/** The inverse of definitionNameOf. */
export function messageNameOf(definition) {
  return definition.startsWith('io.k8s.') ? `k8s.io.${definition.slice('io.k8s.'.length)}` : definition;
}

const TYPE_META = {
  apiVersion: 'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  kind: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
};

export function mergeProtoSchema({ doc, proto, docs, groupOf }) {
  const D = doc.definitions;
  const messages = proto.messages;
  const addedFields = [];
  const addedDefinitions = [];
  const unknownInProto = [];
  const missingMessages = new Set();
  const retargeted = [];

  /** A message carried on the JSON wire as a bare list (`Verbs`, `ExtraValue`). */
  const isWrapper = (m) => /\.(ExtraValue|Verbs)$/.test(m) && messages[m]?.length === 1 && messages[m][0][1] === 'items';

  /** JSON fields of a message with inline members flattened: [[jsonName, type, flags]]. */
  const jsonFields = (m, seen = new Set()) => {
    if (seen.has(m)) return [];
    seen.add(m);
    const out = [];
    for (const [, name, type, flags] of messages[m] ?? []) {
      if (flags & INLINE) out.push(...jsonFields(type, seen));
      else if (name !== '-') out.push([name, type, flags]);
    }
    return out;
  };

  const pending = [];
  const ensureDefinition = (m) => {
    const name = definitionNameOf(m);
    if (!D[name] && !pending.includes(m)) pending.push(m);
    return name;
  };

  const valueSchema = (type) => {
    if (Array.isArray(type)) return { type: 'object', additionalProperties: valueSchema(type[2]) };
    if (SCALARS[type]) return { ...SCALARS[type] };
    if (SPECIAL[type]) return { ...SPECIAL[type] };
    if (isWrapper(type)) return { type: 'array', items: valueSchema(messages[type][0][2]) };
    if (!messages[type]) {
      // The schema holds only what kubectl's binary registers (storage/v1beta1 lost CSIDriverSpec with its removal).
      if (D[definitionNameOf(type)]) return { $ref: `#/definitions/${definitionNameOf(type)}` };
      missingMessages.add(type);
      return { type: 'object' };
    }
    return { $ref: `#/definitions/${ensureDefinition(type)}` };
  };
  const fieldSchema = (type, flags) => {
    if (flags & SLICE_WRAPPER) return { type: 'array', items: valueSchema(messages[type][0][2]) };
    if (flags & REPEATED) return { type: 'array', items: valueSchema(type) };
    return valueSchema(type);
  };

  const describe = (def, field) => docs.get(def)?.fields.get(field)?.description ?? NO_DESCRIPTION;

  /** Is the message a top-level kind: `X` with `XList` beside it, or that list, or named by kubernetes-types. */
  const kindOf = (m) => {
    const def = definitionNameOf(m);
    const fields = messages[m] ?? [];
    const meta = fields.find((f) => f[1] === 'metadata')?.[2];
    const short = m.slice(m.lastIndexOf('.') + 1);
    const td = docs.get(def);
    const pkg = m.slice(0, m.lastIndexOf('.'));
    if (td?.kind) return td.kind;
    if (meta === 'k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta' && messages[`${m}List`]) return short;
    if (meta === 'k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta' && short.endsWith('List') && messages[`${pkg}.${short.slice(0, -4)}`]) return short;
    return undefined;
  };

  const addTypeMeta = (def, m) => {
    const kind = kindOf(m);
    if (!kind) return;
    const pkg = m.slice('k8s.io.api.'.length, m.lastIndexOf('.'));
    const [p, version] = pkg.split('.');
    const group = groupOf(p);
    if (group === undefined) return;
    def['x-kubernetes-group-version-kind'] = [{ group, kind, version }];
    def.properties = { apiVersion: { description: TYPE_META.apiVersion, type: 'string' }, kind: { description: TYPE_META.kind, type: 'string' }, ...def.properties };
  };

  const createDefinition = (m) => {
    const name = definitionNameOf(m);
    if (D[name]) return;
    const td = docs.get(name);
    const properties = {};
    for (const [f, type, flags] of jsonFields(m)) properties[f] = { ...fieldSchema(type, flags), description: describe(name, f) };
    const def = { description: td?.description ?? `${m.slice(m.lastIndexOf('.') + 1)} ${NO_DESCRIPTION}`, type: 'object', properties };
    if (m.startsWith('k8s.io.api.')) addTypeMeta(def, m);
    D[name] = def;
    addedDefinitions.push(name);
  };

  const fillDefinition = (name, m) => {
    const def = D[name];
    if (!def || typeof def !== 'object' || def.type === 'string' || def.format) return;
    const fields = jsonFields(m);
    if (!fields.length) return;
    def.properties ??= {};
    for (const [f, type, flags] of fields) {
      const have = def.properties[f];
      if (have) {
        // A type renamed since 1.20 (Handler -> LifecycleHandler, PVC ResourceRequirements -> VolumeResourceRequirements).
        const want = fieldSchema(type, flags);
        const holder = have.$ref ? have : have.items?.$ref ? have.items : have.additionalProperties?.$ref ? have.additionalProperties : undefined;
        const wantRef = want.$ref ?? want.items?.$ref ?? want.additionalProperties?.$ref;
        if (holder && wantRef && holder.$ref !== wantRef && !Object.values(SPECIAL).some((x) => x.$ref === holder.$ref)) {
          retargeted.push(`${name}.${f}: ${holder.$ref.slice(14)} -> ${wantRef.slice(14)}`);
          holder.$ref = wantRef;
        }
        continue;
      }
      def.properties[f] = { ...fieldSchema(type, flags), description: describe(name, f) };
      addedFields.push(`${name}.${f}`);
    }
    const known = new Set(fields.map((f) => f[0]));
    // Fields removed since 1.20 (ObjectMeta.clusterName): decoding into the current types drops them.
    for (const f of Object.keys(def.properties)) {
      if (known.has(f) || f === 'apiVersion' || f === 'kind') continue;
      unknownInProto.push(`${name}.${f}`);
      delete def.properties[f];
    }
  };

  // Existing definitions first (their refs may pull in new messages), then every API message.
  for (const name of Object.keys(D)) {
    const m = messageNameOf(name);
    if (messages[m] && !SPECIAL[m] && !isWrapper(m)) fillDefinition(name, m);
  }
  // Types only ever inlined (VolumeSource, ProbeHandler, ...) have no definition of their own.
  const referenced = new Set();
  const inlined = new Set();
  for (const fields of Object.values(messages)) {
    for (const [, , type, flags] of fields) {
      const t = Array.isArray(type) ? type[2] : type;
      (flags & INLINE ? inlined : referenced).add(t);
    }
  }
  for (const m of Object.keys(messages)) {
    if (SKIPPED.some((re) => re.test(m)) || SPECIAL[m] || isWrapper(m)) continue;
    if (inlined.has(m) && !referenced.has(m)) continue;
    if (!D[definitionNameOf(m)]) pending.push(m);
  }
  while (pending.length) createDefinition(pending.shift());
  return { addedFields, addedDefinitions, unknownInProto, retargeted, missingMessages: [...missingMessages] };
}

/**
 * Adds to definitions of `prefix` the fields kubernetes-types knows and the
 * document lacks (for groups without protobuf messages: apiextensions.k8s.io).
 * Numbers become int64 integers unless `numberFormats` names the field.
 */
export function mergeKubernetesTypes({ doc, docs, prefix, numberFormats = {} }) {
  const D = doc.definitions;
  const added = [];
  const schemaOf = (t, field) => {
    switch (t.kind) {
      case 'string': return { type: 'string' };
      case 'boolean': return { type: 'boolean' };
      case 'number': return numberFormats[field] ?? { type: 'integer', format: 'int64' };
      case 'array': return { type: 'array', items: schemaOf(t.items, field) };
      case 'map': return { type: 'object', additionalProperties: schemaOf(t.values, field) };
      case 'ref': {
        if (!D[t.name]) createFrom(t.name);
        return D[t.name] ? { $ref: `#/definitions/${t.name}` } : { type: 'object' };
      }
      default: return { type: 'object' };
    }
  };
  const createFrom = (name) => {
    const td = docs.get(name);
    if (!td || td.alias) return;
    D[name] = { description: td.description ?? NO_DESCRIPTION, type: 'object', properties: {} };
    added.push(name);
    for (const [f, fd] of td.fields) D[name].properties[f] = { ...schemaOf(fd.type, `${name}.${f}`), description: fd.description ?? NO_DESCRIPTION };
  };
  for (const [name, td] of docs) {
    if (!name.startsWith(prefix) || !D[name]?.properties) continue;
    for (const [f, fd] of td.fields) {
      if (D[name].properties[f]) continue;
      D[name].properties[f] = { ...schemaOf(fd.type, `${name}.${f}`), description: fd.description ?? NO_DESCRIPTION };
      added.push(`${name}.${f}`);
    }
  }
  return added;
}
