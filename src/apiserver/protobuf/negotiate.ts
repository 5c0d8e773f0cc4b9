/**
 * Output media type negotiation, as kube-apiserver does it
 * (k8s.io/apiserver/pkg/endpoints/handlers/negotiation, goautoneg):
 *
 * - The Accept clauses are ordered by q (highest first), then concrete
 *   types before wildcards, otherwise as sent. The first clause that one of
 *   the server's serializers (JSON, YAML, protobuf, in that order) matches
 *   and whose parameters the endpoint allows wins; `*\/*` and `application/*`
 *   therefore mean JSON. No Accept header means JSON.
 * - `as`/`g`/`v` ask for a transformation: Table (meta.k8s.io v1 or
 *   v1beta1) in JSON or YAML only; PartialObjectMetadata(List) in any
 *   encoding, protobuf included and for custom resources too. Any other
 *   `as` skips the clause.
 * - Objects of custom resources (and of kinds without a protobuf message)
 *   are never protobuf: such a clause is skipped, so `protobuf, *\/*`
 *   gives JSON, and protobuf alone gives 406 Not Acceptable.
 * - `stream=watch` is allowed for serializers with a stream form (JSON,
 *   protobuf); any other stream value skips the clause. Watches also need
 *   that stream form: a winning YAML clause is 406.
 * - Statuses (errors) are negotiated without transformation: a clause with
 *   `as` is skipped; when nothing matches, the Status goes out as JSON.
 *
 * YAML output is not implemented: a YAML choice is answered in JSON, as
 * before negotiation existed here.
 */
import { parseAccept, type AcceptClause } from '../accept.js';

export type Rendering = 'object' | 'metadata' | 'table';
export type Encoding = 'json' | 'protobuf';

export interface MediaChoice {
  rendering: Rendering;
  encoding: Encoding;
  /** The client chose YAML, which is answered in JSON. */
  yaml?: boolean;
  /** The chosen clause has `pretty=1` (upstream's MediaTypeOptions.Pretty). */
  pretty?: boolean;
}

export interface NegotiationTarget {
  /** The endpoint's own objects may be sent as protobuf (built-in kinds). */
  protobuf: boolean;
  /** A watch: only serializers with a stream form qualify. */
  stream?: boolean;
  /** Default restrictions (errors, discovery): no transformation at all. */
  noTransform?: boolean;
  /** The endpoint has no table convertor (reviews, bindings, evictions, token requests, logs): `as=Table` skips the clause. */
  noTable?: boolean;
}

interface Serializer {
  type: string;
  subType: string;
  encoding: Encoding;
  yaml: boolean;
  stream: boolean;
}

const serializers: Serializer[] = [
  { type: 'application', subType: 'json', encoding: 'json', yaml: false, stream: true },
  { type: 'application', subType: 'yaml', encoding: 'json', yaml: true, stream: false },
  { type: 'application', subType: 'vnd.kubernetes.protobuf', encoding: 'protobuf', yaml: false, stream: true },
];

function matches(c: AcceptClause, s: Serializer): boolean {
  return (c.type === s.type && (c.subType === s.subType || c.subType === '*')) || (c.type === '*' && c.subType === '*');
}

/** The rendering a clause asks for on this serializer, or undefined when the endpoint refuses it. */
function accepts(c: AcceptClause, s: Serializer, t: NegotiationTarget): Rendering | undefined {
  let as: string | undefined;
  let g: string | undefined;
  let v: string | undefined;
  for (const [k, val] of c.params) {
    switch (k) {
      case 'as':
        as = val;
        break;
      case 'g':
        g = val;
        break;
      case 'v':
        v = val;
        break;
      case 'stream':
        if (val !== '' && (!s.stream || val !== 'watch')) return undefined;
        break;
      case 'sv':
        if (val !== '' && val !== 'v1') return undefined;
        break;
    }
  }
  const transform = as !== undefined || g !== undefined || v !== undefined;
  if (!transform) {
    if (t.noTransform) return 'object';
    return s.encoding === 'protobuf' && !t.protobuf ? undefined : 'object';
  }
  if (t.noTransform) return undefined;
  if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  switch (as) {
    case 'Table':
      return s.encoding === 'json' && !t.noTable ? 'table' : undefined;
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return 'metadata';
    default:
      return undefined;
  }
}

const plainJson: MediaChoice = Object.freeze({ rendering: 'object', encoding: 'json' });

/** Choices made (frozen; null for 406) by Accept header and target: clients send the same few headers every time. */
const choices = new Map<string, MediaChoice | null>();
const MAX_CHOICES = 256;

/** The negotiated output (frozen), or undefined for 406 Not Acceptable. */
export function negotiateMedia(accept: string | undefined, t: NegotiationTarget): MediaChoice | undefined {
  if (accept === undefined || accept === '') return plainJson;
  const key = `${t.protobuf ? 1 : 0}${t.stream ? 1 : 0}${t.noTransform ? 1 : 0}${t.noTable ? 1 : 0}${accept}`;
  let c = choices.get(key);
  if (c === undefined) {
    c = choose(accept, t) ?? null;
    if (c) Object.freeze(c);
    if (choices.size >= MAX_CHOICES) choices.clear();
    choices.set(key, c);
  }
  return c ?? undefined;
}

function choose(accept: string, t: NegotiationTarget): MediaChoice | undefined {
  for (const c of parseAccept(accept)) {
    for (const s of serializers) {
      if (!matches(c, s)) continue;
      const rendering = accepts(c, s, t);
      if (rendering === undefined) continue;
      if (t.stream && !s.stream) return undefined;
      const choice: MediaChoice = { rendering, encoding: s.encoding };
      if (s.yaml) choice.yaml = true;
      if (c.params.get('pretty') === '1') choice.pretty = true;
      return choice;
    }
  }
  return undefined;
}

/** What a 406 lists (upstream's errNotAcceptable). */
export function notAcceptableMessage(stream: boolean): string {
  const types = stream
    ? ['application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch']
    : ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
  return `only the following media types are accepted: ${types.join(', ')}`;
}
