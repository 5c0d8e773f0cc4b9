/**
 * apimachinery's util/validation checks and the field.Error type.
 *
 * Every check returns a list of messages (empty when valid) worded exactly as
 * Kubernetes words them, because users and tests compare these strings with
 * what a real kube-apiserver says. Wording follows current apimachinery
 * (`api/validate/content`), where length limits are counted in bytes.
 */

// ---------------------------------------------------------------------------
// Message builders (apimachinery util/validation + api/validate/content)
// ---------------------------------------------------------------------------

/** `must be no more than N bytes` */
export function maxLenError(length: number): string {
  return `must be no more than ${length} bytes`;
}

/** A regex failure message with examples, as apimachinery's RegexError. */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  let out = `${msg} (e.g. `;
  examples.forEach((ex, i) => {
    if (i > 0) out += ' or ';
    out += `'${ex}', `;
  });
  return `${out}regex used for validation is '${re}')`;
}

/** `must be non-empty` */
export function emptyError(): string {
  return 'must be non-empty';
}

/** `must be between LO and HI, inclusive` */
export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

/** `must be greater than or equal to N` */
export function minError(min: number): string {
  return `must be greater than or equal to ${min}`;
}

/** UTF-8 length: Kubernetes limits are in bytes, not UTF-16 code units. */
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

// ---------------------------------------------------------------------------
// DNS names
// ---------------------------------------------------------------------------

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelErrMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
export const DNS1123_LABEL_MAX_LENGTH = 63;
const dns1123LabelRe = new RegExp(`^${dns1123LabelFmt}$`);

const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1123SubdomainErrMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
const dns1123SubdomainRe = new RegExp(`^${dns1123SubdomainFmt}$`);

const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035LabelErrMsg =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
export const DNS1035_LABEL_MAX_LENGTH = 63;
const dns1035LabelRe = new RegExp(`^${dns1035LabelFmt}$`);

/** RFC 1123 label: namespace names, service names, ... */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!dns1123LabelRe.test(value)) {
    if (dns1123SubdomainRe.test(value)) {
      // A valid subdomain but not a valid label: it has dots.
      errs.push('must not contain dots');
    } else {
      errs.push(regexError(dns1123LabelErrMsg, dns1123LabelFmt, 'my-name', '123-abc'));
    }
  }
  return errs;
}

/** RFC 1123 subdomain: most object names. */
export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!dns1123SubdomainRe.test(value)) errs.push(regexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, 'example.com'));
  return errs;
}

/** RFC 1035 label: service names (must start with a letter). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!dns1035LabelRe.test(value)) errs.push(regexError(dns1035LabelErrMsg, dns1035LabelFmt, 'my-name', 'abc-123'));
  return errs;
}

// ---------------------------------------------------------------------------
// Label keys (qualified names) and label values
// ---------------------------------------------------------------------------

const qualifiedNameCharFmt = '[A-Za-z0-9]';
const qualifiedNameExtCharFmt = '[-A-Za-z0-9_.]';
const qualifiedNameFmt = `(${qualifiedNameCharFmt}${qualifiedNameExtCharFmt}*)?${qualifiedNameCharFmt}`;
const qualifiedNameErrMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const qualifiedNameMaxLength = 63;
const qualifiedNameRe = new RegExp(`^${qualifiedNameFmt}$`);

/**
 * A "qualified name": label keys, annotation keys (lower-cased first),
 * finalizer names. `[prefix/]name`, prefix a DNS subdomain, name <= 63 bytes.
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  switch (parts.length) {
    case 1:
      name = parts[0]!;
      break;
    case 2: {
      const prefix = parts[0]!;
      name = parts[1]!;
      if (prefix.length === 0) {
        errs.push(`prefix part ${emptyError()}`);
      } else {
        for (const msg of isDNS1123Subdomain(prefix)) errs.push(`prefix part ${msg}`);
      }
      break;
    }
    default:
      return [
        `a valid label key ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}` +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ];
  }
  if (name.length === 0) {
    errs.push(`name part ${emptyError()}`);
  } else if (byteLength(name) > qualifiedNameMaxLength) {
    errs.push(`name part ${maxLenError(qualifiedNameMaxLength)}`);
  }
  if (!qualifiedNameRe.test(name)) {
    errs.push(`name part ${regexError(qualifiedNameErrMsg, qualifiedNameFmt, 'MyName', 'my.name', '123-abc')}`);
  }
  return errs;
}

const labelValueFmt = `(${qualifiedNameFmt})?`;
const labelValueErrMsg =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
export const LABEL_VALUE_MAX_LENGTH = 63;
const labelValueRe = new RegExp(`^${labelValueFmt}$`);

/** A label value: empty, or <= 63 bytes of `[A-Za-z0-9._-]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!labelValueRe.test(value)) errs.push(regexError(labelValueErrMsg, labelValueFmt, 'MyValue', 'my_value', '12345'));
  return errs;
}

// ---------------------------------------------------------------------------
// Ports, identifiers, path segments
// ---------------------------------------------------------------------------

/** A non-zero port number, 1..65535. */
export function isValidPortNum(port: number): string[] {
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return [];
  return [inclusiveRangeError(1, 65535)];
}

/** Inclusive integer range check. */
export function isInRange(value: number, min: number, max: number): string[] {
  if (value >= min && value <= max) return [];
  return [inclusiveRangeError(min, max)];
}

const portNameCharsetRe = /^[-a-z0-9]+$/;
const portNameOneLetterRe = /[a-z]/;

/** An IANA_SVC_NAME: <= 15 chars of [-a-z0-9], at least one letter, no leading/trailing/double hyphen. */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (byteLength(port) > 15) errs.push(maxLenError(15));
  if (!portNameCharsetRe.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!portNameOneLetterRe.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

const cIdentifierFmt = '[A-Za-z_][A-Za-z0-9_]*';
const cIdentifierErrMsg =
  "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'";
const cIdentifierRe = new RegExp(`^${cIdentifierFmt}$`);

/** A C identifier (format only, not length). */
export function isCIdentifier(value: string): string[] {
  if (cIdentifierRe.test(value)) return [];
  return [regexError(cIdentifierErrMsg, cIdentifierFmt, 'my_name', 'MY_NAME', 'MyName')];
}

const percentFmt = '[0-9]+%';
const percentRe = new RegExp(`^${percentFmt}$`);

/** `NN%` */
export function isValidPercent(percent: string): string[] {
  if (percentRe.test(percent)) return [];
  return [regexError("a valid percent string must be a numeric string followed by an ending '%'", percentFmt, '1%', '93%')];
}

const configMapKeyFmt = '[-._a-zA-Z0-9]+';
const configMapKeyRe = new RegExp(`^${configMapKeyFmt}$`);

/** A key of a ConfigMap's or Secret's data. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!configMapKeyRe.test(value)) {
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", configMapKeyFmt, 'key.name', 'KEY_NAME', 'key-name'));
  }
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/**
 * Whether a name can be used as one URL path segment (apimachinery
 * api/validation/path). With prefix=true (generateName), exact matches of
 * `.`/`..` are allowed since a suffix follows.
 */
export function validatePathSegmentName(name: string, prefix = false): string[] {
  if (!prefix) {
    for (const illegal of ['.', '..']) {
      if (name === illegal) return [`may not be '${illegal}'`];
    }
  }
  const errs: string[] = [];
  for (const illegal of ['/', '%']) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

// ---------------------------------------------------------------------------
// field.Error
// ---------------------------------------------------------------------------

export type FieldErrorType =
  | 'FieldValueInvalid'
  | 'FieldValueRequired'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueNotFound'
  | 'InternalError';

/**
 * One field-level validation failure (apimachinery field.Error).
 * `message` is the full `Error()` text (`field: body`); use fieldErrorBody for
 * the text without the field, as the API server puts in Status causes.
 */
export interface FieldError {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly message: string;
  readonly badValue?: unknown;
  readonly detail: string;
}

const typeText: Record<FieldErrorType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** The human text of an error type (`Invalid value`, `Required value`, ...). */
export function fieldErrorTypeText(t: FieldErrorType): string {
  return typeText[t];
}

/**
 * A bad value printed verbatim in messages, for values whose Go rendering
 * matters (e.g. `[]string(nil)`).
 */
export class GoLiteral {
  constructor(readonly repr: string) {}
  toJSON(): string {
    return this.repr;
  }
}

const GO_PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's strconv.Quote (what `%q` prints): `"a\"b\n"`, `\x07`-style escapes for control bytes, `\u` for other non-printables. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const r = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (GO_PRINTABLE.test(ch)) out += ch;
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\v') out += '\\v';
    else if (r < 0x20 || r === 0x7f) out += '\\x' + r.toString(16).padStart(2, '0');
    else if (r >= 0xd800 && r <= 0xdfff) out += '\\ufffd';
    else if (r < 0x10000) out += '\\u' + r.toString(16).padStart(4, '0');
    else out += '\\U' + r.toString(16).padStart(8, '0');
  }
  return out + '"';
}

/** Renders a bad value the way field.Error does (Go %v / %q / %#v). */
export function formatBadValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof GoLiteral) return value.repr;
  switch (typeof value) {
    case 'string':
      return goQuote(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    default:
      break;
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return `[]string{${(value as string[]).map(goQuote).join(', ')}}`;
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isInteger(v))) {
    return `[]int{${value.join(', ')}}`;
  }
  return JSON.stringify(value);
}

function makeFieldError(type: FieldErrorType, field: string, badValue: unknown, detail: string, omitValue: boolean): FieldError {
  let body = typeText[type];
  if (!omitValue) body += `: ${formatBadValue(badValue)}`;
  if (detail.length > 0) body += `: ${detail}`;
  const e: FieldError = { type, field, message: `${field}: ${body}`, detail };
  if (badValue !== undefined) (e as { badValue?: unknown }).badValue = badValue;
  return Object.freeze(e);
}

/** `field: Invalid value: <value>: detail` */
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return makeFieldError('FieldValueInvalid', field, value, detail, false);
}

/** `field: Required value[: detail]` */
export function required(field: string, detail = ''): FieldError {
  return makeFieldError('FieldValueRequired', field, '', detail, true);
}

/** `field: Unsupported value: <value>: supported values: "a", "b"` */
export function notSupported(field: string, value: unknown, valid: readonly string[]): FieldError {
  const detail = valid.length > 0 ? `supported values: ${valid.map(goQuote).join(', ')}` : '';
  return makeFieldError('FieldValueNotSupported', field, value, detail, false);
}

/** `field: Forbidden: detail` */
export function forbidden(field: string, detail: string): FieldError {
  return makeFieldError('FieldValueForbidden', field, '', detail, true);
}

/** `field: Duplicate value: <value>` */
export function duplicate(field: string, value: unknown): FieldError {
  return makeFieldError('FieldValueDuplicate', field, value, '', false);
}

/** `field: Too long: must have at most N bytes` (the value is not printed). */
export function tooLong(field: string, value: unknown, max: number): FieldError {
  return makeFieldError('FieldValueTooLong', field, value, `must have at most ${max} bytes`, true);
}

/** `field: Too many: <actual>: must have at most N items` */
export function tooMany(field: string, actual: number, max: number): FieldError {
  return makeFieldError('FieldValueTooMany', field, actual, `must have at most ${max} items`, false);
}

/** `field: Not found: <value>` */
export function notFound(field: string, value: unknown): FieldError {
  return makeFieldError('FieldValueNotFound', field, value, '', false);
}

/** `field: Internal error: detail` */
export function internalError(field: string, detail: string): FieldError {
  return makeFieldError('InternalError', field, undefined, detail, true);
}

/** The error text without the leading `field: ` (field.Error.ErrorBody()). */
export function fieldErrorBody(e: FieldError): string {
  return e.message.slice(e.field.length + 2);
}

/**
 * The text of an aggregate of errors (utilerrors.NewAggregate(...).Error()):
 * duplicates dropped, one message alone, several as `[a, b]`.
 */
export function aggregateMessage(errs: readonly { message: string }[]): string {
  const seen = new Set<string>();
  for (const e of errs) seen.add(e.message);
  const msgs = [...seen];
  if (msgs.length === 0) return '';
  if (msgs.length === 1) return msgs[0]!;
  return `[${msgs.join(', ')}]`;
}

// ---------------------------------------------------------------------------
// Object metadata helpers (apimachinery meta/v1/validation, api/validation)
// ---------------------------------------------------------------------------

/** Maximum total size of all annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024;

/** metav1validation.ValidateLabels: keys are qualified names, values label values. Keys in sorted order. */
export function validateLabels(labels: Readonly<Record<string, string>> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!labels) return errs;
  for (const k of Object.keys(labels).sort()) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(field, k, msg));
    const v = labels[k]!;
    for (const msg of isValidLabelValue(v)) errs.push(invalid(field, v, msg));
  }
  return errs;
}

/** apimachinery ValidateAnnotations: keys are qualified names (case-insensitive); total size <= 256 KiB. */
export function validateAnnotations(annotations: Readonly<Record<string, string>> | undefined, field: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!annotations) return errs;
  let size = 0;
  for (const k of Object.keys(annotations).sort()) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(field, k, msg));
    size += byteLength(k) + byteLength(annotations[k]!);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT_B) errs.push(tooLong(field, '', TOTAL_ANNOTATION_SIZE_LIMIT_B));
  return errs;
}
