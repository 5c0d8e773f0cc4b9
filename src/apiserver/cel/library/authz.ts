/**
 * The extension point for Kubernetes' authz library (library/authz.go),
 * which only admission policies and webhook match conditions see (through
 * their `authorizer` variable; CRD rules never do). The types and
 * functions are declared here; the decisions come from the
 * `CelAuthorizer` value the caller puts in the activation, whose
 * `decide` callback is synchronous (CEL evaluation is): an admission
 * plugin resolves what it needs from kcm's authorizer first.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../api/validation.js';
import { celError, type CelLibrary } from './library.js';

/** What `check(verb)` asks (authorizer.AttributesRecord, the parts CEL can set). */
export interface AuthzCheckAttributes {
  verb: string;
  /** Set for non-resource checks (`authorizer.path('/healthz')`). */
  path?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** Set by `authorizer.serviceAccount(ns, name)`: check as that service account. */
  serviceAccount?: { namespace: string; name: string };
  /** Set by `.fieldSelector(s)` / `.labelSelector(s)` (AuthzSelectors library), unparsed. */
  fieldSelector?: string;
  labelSelector?: string;
}

export interface AuthzDecision {
  decision: 'allow' | 'deny' | 'noOpinion';
  reason?: string;
  error?: string;
}

/** The `authorizer` variable's value. */
export class CelAuthorizer {
  readonly celTypeName = 'kubernetes.authorization.Authorizer';
  constructor(
    readonly decide: (attrs: AuthzCheckAttributes) => AuthzDecision,
    readonly serviceAccount?: { namespace: string; name: string },
  ) {}
}

export class CelPathCheck {
  readonly celTypeName = 'kubernetes.authorization.PathCheck';
  constructor(
    readonly authz: CelAuthorizer,
    readonly path: string,
  ) {}
}

export class CelGroupCheck {
  readonly celTypeName = 'kubernetes.authorization.GroupCheck';
  constructor(
    readonly authz: CelAuthorizer,
    readonly group: string,
  ) {}
}

export class CelResourceCheck {
  readonly celTypeName = 'kubernetes.authorization.ResourceCheck';
  constructor(
    readonly authz: CelAuthorizer,
    readonly attrs: Omit<AuthzCheckAttributes, 'verb'>,
  ) {}
  with(patch: Partial<AuthzCheckAttributes>): CelResourceCheck {
    return new CelResourceCheck(this.authz, { ...this.attrs, ...patch });
  }
}

export class CelDecision {
  readonly celTypeName = 'kubernetes.authorization.Decision';
  constructor(readonly d: AuthzDecision) {}
}

const A = 'kubernetes.authorization.Authorizer';
const P = 'kubernetes.authorization.PathCheck';
const G = 'kubernetes.authorization.GroupCheck';
const R = 'kubernetes.authorization.ResourceCheck';
const D = 'kubernetes.authorization.Decision';

/** The type name of the `authorizer` variable to declare with this library. */
export const authorizerTypeName = A;

export const authzLibrary: CelLibrary = {
  name: 'kubernetes.authz',
  functions: ['path', 'group', 'serviceAccount', 'resource', 'subresource', 'namespace', 'name', 'check', 'allowed', 'reason', 'errored', 'error', 'fieldSelector', 'labelSelector'],
  declare(env: Environment) {
    for (const [t, ctor] of [
      [A, CelAuthorizer],
      [P, CelPathCheck],
      [G, CelGroupCheck],
      [R, CelResourceCheck],
      [D, CelDecision],
    ] as const) {
      env.registerType(t, { ctor: ctor as unknown as new () => object, fields: {} });
    }
    const sa = (a: CelAuthorizer) => (a.serviceAccount ? { serviceAccount: a.serviceAccount } : {});
    env
      .registerFunction(`${A}.path(string): ${P}`, (a: CelAuthorizer, p: string) => (p.trim() === '' ? celError('path must not be empty') : new CelPathCheck(a, p)))
      .registerFunction(`${A}.group(string): ${G}`, (a: CelAuthorizer, g: string) => new CelGroupCheck(a, g))
      .registerFunction(`${A}.serviceAccount(string, string): ${A}`, (a: CelAuthorizer, ns: string, name: string) => {
        const nsErrs = isDNS1123Label(ns);
        if (nsErrs.length) return celError(`invalid service account namespace: ${JSON.stringify(ns)}: ${nsErrs.join(', ')}`);
        const nameErrs = isDNS1123Subdomain(name);
        if (nameErrs.length) return celError(`invalid service account name: ${JSON.stringify(name)}: ${nameErrs.join(', ')}`);
        return new CelAuthorizer(a.decide, { namespace: ns, name });
      })
      .registerFunction(`${G}.resource(string): ${R}`, (g: CelGroupCheck, r: string) =>
        r.trim() === '' ? celError('resource must not be empty') : new CelResourceCheck(g.authz, { ...sa(g.authz), group: g.group, resource: r }),
      )
      .registerFunction(`${R}.subresource(string): ${R}`, (r: CelResourceCheck, s: string) => r.with({ subresource: s }))
      .registerFunction(`${R}.namespace(string): ${R}`, (r: CelResourceCheck, s: string) => r.with({ namespace: s }))
      .registerFunction(`${R}.name(string): ${R}`, (r: CelResourceCheck, s: string) => r.with({ name: s }))
      // AuthzSelectors (Kubernetes 1.31+, on with AuthorizeWithSelectors)
      .registerFunction(`${R}.fieldSelector(string): ${R}`, (r: CelResourceCheck, s: string) => r.with({ fieldSelector: s }))
      .registerFunction(`${R}.labelSelector(string): ${R}`, (r: CelResourceCheck, s: string) => r.with({ labelSelector: s }))
      .registerFunction(`${P}.check(string): ${D}`, (p: CelPathCheck, verb: string) => new CelDecision(p.authz.decide({ ...sa(p.authz), verb, path: p.path })))
      .registerFunction(`${R}.check(string): ${D}`, (r: CelResourceCheck, verb: string) => new CelDecision(r.authz.decide({ ...r.attrs, verb })))
      .registerFunction(`${D}.allowed(): bool`, (d: CelDecision) => d.d.decision === 'allow')
      .registerFunction(`${D}.reason(): string`, (d: CelDecision) => d.d.reason ?? '')
      .registerFunction(`${D}.errored(): bool`, (d: CelDecision) => !!d.d.error)
      .registerFunction(`${D}.error(): string`, (d: CelDecision) => d.d.error ?? '');
  },
};
