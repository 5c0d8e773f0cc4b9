/**
 * Kubernetes' format library (library/format.go): named string formats
 * (`format.dns1123Label()`, `format.named("uri")`) whose `validate(s)`
 * returns optional.none() for a valid string, or the list of
 * apimachinery's messages.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Optional } from '@marcbachmann/cel-js';
import { isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '../../../api/validation.js';
import type { CelLibrary } from './library.js';
import { isURL, parseURL } from './urls.js';
import { CelEvalError } from '../errors.js';

/** NameIs*(name, prefix=true): a generateName prefix may end with a dash. */
const maskTrailingDash = (name: string): string => (name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name);

/** A named format (apiservercel.Format). */
export class CelFormat {
  readonly celTypeName = 'kubernetes.NamedFormat';
  constructor(
    readonly name: string,
    readonly validateFunc: (s: string) => string[],
    readonly maxRegexSize: number,
  ) {}

  celEquals(other: unknown): boolean {
    return other instanceof CelFormat && other.name === this.name;
  }

}

const strfmtDate = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.getUTCDate() === Number(m[3]) && d.getUTCMonth() + 1 === Number(m[2]);
};

const strfmtDateTime = (s: string): boolean => {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return false;
  return strfmtDate(`${m[1]}-${m[2]}-${m[3]}`) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 60;
};

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const uuid = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** ConstantFormats of format.go, by CEL name. */
export const constantFormats: ReadonlyMap<string, CelFormat> = new Map([
  ['dns1123Label', new CelFormat('DNS1123Label', (s) => isDNS1123Label(s), 30)],
  ['dns1123Subdomain', new CelFormat('DNS1123Subdomain', (s) => isDNS1123Subdomain(s), 60)],
  ['dns1035Label', new CelFormat('DNS1035Label', (s) => isDNS1035Label(s), 30)],
  ['qualifiedName', new CelFormat('QualifiedName', (s) => isQualifiedName(s), 60)],
  ['dns1123LabelPrefix', new CelFormat('DNS1123LabelPrefix', (s) => isDNS1123Label(maskTrailingDash(s)), 30)],
  ['dns1123SubdomainPrefix', new CelFormat('DNS1123SubdomainPrefix', (s) => isDNS1123Subdomain(maskTrailingDash(s)), 60)],
  ['dns1035LabelPrefix', new CelFormat('DNS1035LabelPrefix', (s) => isDNS1035Label(maskTrailingDash(s)), 30)],
  ['labelValue', new CelFormat('LabelValue', (s) => isValidLabelValue(s), 40)],
  [
    'uri',
    new CelFormat(
      'URI',
      (s) => {
        if (isURL(s)) return [];
        try {
          parseURL(s);
        } catch (err) {
          if (err instanceof CelEvalError) return [err.message.replace(/^URL parse error during conversion from string: /, '')];
        }
        return ['invalid URI'];
      },
      1103,
    ),
  ],
  ['uuid', new CelFormat('uuid', (s) => (uuid.test(s) ? [] : ['does not match the UUID format']), 84)],
  ['byte', new CelFormat('byte', (s) => (base64.test(s) ? [] : ['invalid base64']), 84)],
  ['date', new CelFormat('date', (s) => (strfmtDate(s) ? [] : ['invalid date']), 80)],
  ['datetime', new CelFormat('datetime', (s) => (strfmtDateTime(s) ? [] : ['invalid datetime']), 80)],
]);

const T = 'kubernetes.NamedFormat';

class FormatNamespace {}

export const formatLibrary: CelLibrary = {
  name: 'kubernetes.format',
  functions: ['validate', 'named', ...constantFormats.keys()],
  declare(env: Environment) {
    env
      .registerType(T, { ctor: CelFormat, fields: {} })
      .registerType('FormatNamespace', FormatNamespace)
      .registerConstant('format', 'FormatNamespace', new FormatNamespace())
      .registerFunction(`${T}.validate(string): optional<list<string>>`, (f: CelFormat, s: string) => {
        const res = f.validateFunc(s);
        return res.length === 0 ? Optional.none() : Optional.of(res);
      })
      .registerFunction(`FormatNamespace.named(string): optional<${T}>`, (_: unknown, name: string) => {
        const f = constantFormats.get(name);
        return f ? Optional.of(f) : Optional.none();
      })
      .registerOperator(`${T} == ${T}`, (a: CelFormat, b: CelFormat) => a.celEquals(b));
    for (const [name, f] of constantFormats) env.registerFunction(`FormatNamespace.${name}(): ${T}`, () => f);
  },
};
