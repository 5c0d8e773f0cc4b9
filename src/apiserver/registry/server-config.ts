/**
 * The kinds that configure the API server itself: admissionregistration.k8s.io
 * (webhook configurations, validating admission policies and bindings),
 * flowcontrol.apiserver.k8s.io (flow schemas, priority levels) and
 * apiregistration.k8s.io (API services). Defaults follow
 * pkg/apis/admissionregistration/v1, pkg/apis/flowcontrol/v1 and
 * kube-aggregator's apiregistration/v1 defaults.go; generation and status
 * follow their strategies. A strategy applies once the resource is served.
 */
import type { Strategy } from './strategy.js';
import { newStrategy, child, dflt, dfltZero, items, objAt } from './generic.js';
import { validateValidatingAdmissionPolicy, validateValidatingAdmissionPolicyBinding, validateWebhookConfiguration, validateWebhookConfigurationUpdate } from './admissionregistration.js';

type Obj = Record<string, unknown>;

const admissionGroup = 'admissionregistration.k8s.io';

/** SetDefaults_ServiceReference: port 443. */
function defaultServiceReference(clientConfig: Obj | undefined): void {
  const service = objAt(clientConfig, 'service');
  if (service) dflt(service, 'port', 443);
}

/** SetDefaults_Rule: scope `*`. */
function defaultRules(rules: Obj[]): void {
  for (const r of rules) dflt(r, 'scope', '*');
}

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook (v1: no sideEffects or admissionReviewVersions default). */
function defaultWebhook(w: Obj, mutating: boolean): void {
  dflt(w, 'failurePolicy', 'Fail');
  dflt(w, 'matchPolicy', 'Equivalent');
  dflt(w, 'namespaceSelector', {});
  dflt(w, 'objectSelector', {});
  dflt(w, 'timeoutSeconds', 10);
  if (mutating) dflt(w, 'reinvocationPolicy', 'Never');
  defaultRules(items(w, 'rules'));
  defaultServiceReference(objAt(w, 'clientConfig'));
}

/** SetDefaults_MatchResources, and SetDefaults_Rule of its (exclude) resource rules. */
function defaultMatchResources(m: Obj | undefined): void {
  if (!m) return;
  dflt(m, 'matchPolicy', 'Equivalent');
  dflt(m, 'namespaceSelector', {});
  dflt(m, 'objectSelector', {});
  defaultRules([...items(m, 'resourceRules'), ...items(m, 'excludeResourceRules')]);
}

function webhookConfiguration(kind: string, resource: string, mutating: boolean): Strategy {
  const s = newStrategy({
    group: admissionGroup,
    kind,
    resource,
    namespaced: false,
    tracksGeneration: true,
    generationSource: (o) => o.webhooks,
    defaults(obj) {
      for (const w of items(obj, 'webhooks')) defaultWebhook(w, mutating);
    },
  });
  // Updates validate with what the old object already allowed (not the create rules).
  const { validate, validateUpdate } = s;
  s.validate = (obj) => [...validate(obj), ...validateWebhookConfiguration(obj, mutating)];
  s.validateUpdate = (obj, old) => [...validateUpdate(obj, old), ...validateWebhookConfigurationUpdate(obj, old, mutating)];
  return s;
}

function admissionRegistrationStrategies(): Strategy[] {
  return [
    webhookConfiguration('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false),
    webhookConfiguration('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', true),
    newStrategy({
      group: admissionGroup,
      kind: 'ValidatingAdmissionPolicy',
      resource: 'validatingadmissionpolicies',
      namespaced: false,
      hasStatus: true,
      tracksGeneration: true,
      defaults(obj) {
        const s = child(obj, 'spec');
        dflt(s, 'failurePolicy', 'Fail');
        defaultMatchResources(objAt(s, 'matchConstraints'));
      },
      validate: validateValidatingAdmissionPolicy,
    }),
    newStrategy({
      group: admissionGroup,
      kind: 'ValidatingAdmissionPolicyBinding',
      resource: 'validatingadmissionpolicybindings',
      namespaced: false,
      tracksGeneration: true,
      defaults(obj) {
        const s = child(obj, 'spec');
        defaultMatchResources(objAt(s, 'matchResources'));
        const paramRef = objAt(s, 'paramRef');
        if (paramRef) dflt(paramRef, 'parameterNotFoundAction', 'Deny');
      },
      validate: validateValidatingAdmissionPolicyBinding,
    }),
  ];
}

const flowGroup = 'flowcontrol.apiserver.k8s.io';

/** SetDefaults_QueuingConfiguration. */
function defaultQueuing(q: Obj | undefined): void {
  if (!q) return;
  dfltZero(q, 'handSize', 8);
  dfltZero(q, 'queues', 64);
  dfltZero(q, 'queueLengthLimit', 50);
}

function flowControlStrategies(): Strategy[] {
  return [
    newStrategy({
      group: flowGroup,
      kind: 'FlowSchema',
      resource: 'flowschemas',
      namespaced: false,
      hasStatus: true,
      tracksGeneration: true,
      defaults: (obj) => dfltZero(child(obj, 'spec'), 'matchingPrecedence', 1000),
    }),
    newStrategy({
      group: flowGroup,
      kind: 'PriorityLevelConfiguration',
      resource: 'prioritylevelconfigurations',
      namespaced: false,
      hasStatus: true,
      tracksGeneration: true,
      defaults(obj) {
        const s = child(obj, 'spec');
        const limited = objAt(s, 'limited');
        if (limited) {
          dflt(limited, 'nominalConcurrencyShares', 30);
          dflt(limited, 'lendablePercent', 0);
          defaultQueuing(objAt(objAt(limited, 'limitResponse'), 'queuing'));
        }
        const exempt = objAt(s, 'exempt');
        if (exempt) {
          dflt(exempt, 'nominalConcurrencyShares', 0);
          dflt(exempt, 'lendablePercent', 0);
        }
      },
    }),
  ];
}

function apiServiceStrategy(): Strategy {
  return newStrategy({
    group: 'apiregistration.k8s.io',
    kind: 'APIService',
    resource: 'apiservices',
    namespaced: false,
    hasStatus: true,
    defaults(obj) {
      const service = objAt(obj.spec, 'service');
      if (service) dflt(service, 'port', 443);
    },
  });
}

export function serverConfigStrategies(): Strategy[] {
  return [...admissionRegistrationStrategies(), ...flowControlStrategies(), apiServiceStrategy()];
}
