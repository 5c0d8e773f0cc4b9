/**
 * apps/v1: deployments, replicasets, statefulsets, daemonsets,
 * controllerrevisions (pkg/registry/apps/*, pkg/apis/apps/v1/defaults.go,
 * pkg/apis/apps/validation).
 */
import type { StatefulSet, DaemonSet } from 'kubernetes-types/apps/v1.js';
import type { KubeObject } from '../../api/types.js';
import type { Strategy } from './strategy.js';
import type { LabelSelector } from 'kubernetes-types/meta/v1.js';
import { type FieldError, GoLiteral, invalid, forbidden, notSupported } from '../../api/validation.js';
import { newStrategy, child, dflt, dfltZero } from './generic.js';
import { defaultPodTemplate, validatePodTemplate } from './pod-spec.js';
import { immutable, immutableMessage, nonNegative, deepEqual, oneOf, goLabelSelector } from './meta-validation.js';
import { specOf, validateSelectorAndTemplate, validateReplicas, scaleAccess, labelSelectorString } from './workload.js';
import { defaultPVC } from './core.js';

type Obj = Record<string, unknown>;

/** An IntOrString that is a percentage: its number; else undefined. */
function percent(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const m = /^(\d+)%$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

/** ValidatePositiveIntOrPercent + IsNotMoreThan100Percent. */
function validateIntOrPercent(v: unknown, path: string): FieldError[] {
  if (v === undefined) return [];
  if (typeof v === 'number') return nonNegative(v, path);
  const p = percent(v);
  if (p === undefined) return [invalid(path, v, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")];
  if (p > 100) return [invalid(path, v, 'must not be greater than 100%')];
  return [];
}

function isZero(v: unknown): boolean {
  return v === 0 || percent(v) === 0;
}

function validateRollingUpdate(ru: Obj | undefined, path: string): FieldError[] {
  if (!ru) return [];
  const errs = [...validateIntOrPercent(ru.maxUnavailable, `${path}.maxUnavailable`), ...validateIntOrPercent(ru.maxSurge, `${path}.maxSurge`)];
  if (isZero(ru.maxUnavailable ?? 0) && isZero(ru.maxSurge ?? 0)) {
    errs.push(invalid(`${path}.maxUnavailable`, ru.maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
  }
  return errs;
}

function defaultDeployment(obj: KubeObject): void {
  const s = child(obj, 'spec');
  dflt(s, 'replicas', 1);
  const strategy = child(s, 'strategy');
  dfltZero(strategy, 'type', 'RollingUpdate');
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    dflt(ru, 'maxUnavailable', '25%');
    dflt(ru, 'maxSurge', '25%');
  }
  dflt(s, 'revisionHistoryLimit', 10);
  dflt(s, 'progressDeadlineSeconds', 600);
  defaultPodTemplate(s.template as never);
}

function validateDeployment(obj: KubeObject): FieldError[] {
  const s = specOf(obj);
  const errs = [...validateReplicas(obj), ...validateSelectorAndTemplate(obj, 'deployment')];
  errs.push(...validatePodTemplate(s.template as never, 'spec.template', ['Always']));
  const st = (s.strategy ?? {}) as Obj;
  errs.push(...oneOf(st.type as string | undefined, ['Recreate', 'RollingUpdate'], 'spec.strategy.type'));
  if (st.type === 'Recreate' && st.rollingUpdate) {
    errs.push(forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  }
  if (st.type === 'RollingUpdate') errs.push(...validateRollingUpdate(st.rollingUpdate as Obj | undefined, 'spec.strategy.rollingUpdate'));
  errs.push(...nonNegative(s.revisionHistoryLimit as number | undefined, 'spec.revisionHistoryLimit'));
  errs.push(...nonNegative(s.minReadySeconds as number | undefined, 'spec.minReadySeconds'));
  const pds = s.progressDeadlineSeconds as number | undefined;
  if (pds !== undefined) {
    errs.push(...nonNegative(pds, 'spec.progressDeadlineSeconds'));
    if (pds <= ((s.minReadySeconds as number | undefined) ?? 0)) {
      errs.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
    }
  }
  return errs;
}

/** apps/v1 selectors never change: `spec.selector: Invalid value: v1.LabelSelector{...}: field is immutable`. */
function selectorImmutable(n: KubeObject, o: KubeObject): FieldError[] {
  const sel = specOf(n).selector as LabelSelector | undefined;
  if (deepEqual(sel, specOf(o).selector)) return [];
  return [invalid('spec.selector', new GoLiteral(goLabelSelector(sel)), immutableMessage)];
}

function deploymentStrategy(): Strategy {
  return newStrategy({
    group: 'apps',
    kind: 'Deployment',
    resource: 'deployments',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    // Annotations are copied to replica sets, so they bump the generation too.
    generationSource: (o) => [o.spec, o.metadata?.annotations ?? {}],
    statusMetaResets: ['labels'],
    defaults: defaultDeployment,
    validate: validateDeployment,
    validateUpdate: selectorImmutable,
    scale: scaleAccess(labelSelectorString),
  });
}

function replicaSetStrategy(): Strategy {
  return newStrategy({
    group: 'apps',
    kind: 'ReplicaSet',
    resource: 'replicasets',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    defaults(obj) {
      const s = child(obj, 'spec');
      dflt(s, 'replicas', 1);
      defaultPodTemplate(s.template as never);
    },
    validate(obj) {
      return [
        ...validateReplicas(obj),
        ...validateSelectorAndTemplate(obj, 'replicaset'),
        ...validatePodTemplate(specOf(obj).template as never, 'spec.template', ['Always']),
        ...nonNegative(specOf(obj).minReadySeconds as number | undefined, 'spec.minReadySeconds'),
      ];
    },
    validateUpdate: selectorImmutable,
    fields: { 'status.replicas': (o) => String(((o.status as Obj | undefined)?.replicas as number | undefined) ?? 0) },
    scale: scaleAccess(labelSelectorString),
  });
}

const stsMutable = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds', 'revisionHistoryLimit'];

function statefulSetStrategy(): Strategy {
  return newStrategy({
    group: 'apps',
    kind: 'StatefulSet',
    resource: 'statefulsets',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    defaults(obj) {
      const s = child(obj, 'spec');
      dfltZero(s, 'podManagementPolicy', 'OrderedReady');
      const us = child(s, 'updateStrategy');
      // Only a defaulted type brings an (empty) rollingUpdate; a given one gets its partition.
      if (us.type === undefined || us.type === null || us.type === '') {
        us.type = 'RollingUpdate';
        dflt(us, 'rollingUpdate', {});
      }
      const ru = us.rollingUpdate;
      if (us.type === 'RollingUpdate' && ru && typeof ru === 'object') dflt(ru, 'partition', 0);
      const retention = child(s, 'persistentVolumeClaimRetentionPolicy');
      dfltZero(retention, 'whenDeleted', 'Retain');
      dfltZero(retention, 'whenScaled', 'Retain');
      dflt(s, 'replicas', 1);
      dflt(s, 'revisionHistoryLimit', 10);
      defaultPodTemplate(s.template as never);
      // Claim templates get PVC defaults, status.phase Pending included (as a real cluster prints).
      for (const pvc of (s.volumeClaimTemplates ?? []) as KubeObject[]) defaultPVC(pvc);
    },
    validate(obj) {
      const s = specOf(obj) as NonNullable<StatefulSet['spec']> & Obj;
      const errs = [
        ...validateReplicas(obj),
        ...validateSelectorAndTemplate(obj, 'statefulset'),
        // Mounts may name claim templates: the controller adds their volumes to each pod (upstream skips pod spec validation here).
        ...validatePodTemplate(withClaimTemplateVolumes(s), 'spec.template', ['Always']),
        ...oneOf(s.podManagementPolicy, ['OrderedReady', 'Parallel'], 'spec.podManagementPolicy'),
        ...oneOf(s.updateStrategy?.type, ['RollingUpdate', 'OnDelete'], 'spec.updateStrategy.type'),
        ...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'),
        ...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'),
        ...nonNegative(s.updateStrategy?.rollingUpdate?.partition, 'spec.updateStrategy.rollingUpdate.partition'),
      ];
      if (s.updateStrategy?.type === 'OnDelete' && s.updateStrategy.rollingUpdate) {
        errs.push(invalid('spec.updateStrategy.rollingUpdate', s.updateStrategy.rollingUpdate, 'only allowed for updateStrategy \'RollingUpdate\''));
      }
      const retention = s.persistentVolumeClaimRetentionPolicy;
      if (retention) {
        errs.push(...oneOf(retention.whenDeleted, ['Retain', 'Delete'], 'spec.persistentVolumeClaimRetentionPolicy.whenDeleted'));
        errs.push(...oneOf(retention.whenScaled, ['Retain', 'Delete'], 'spec.persistentVolumeClaimRetentionPolicy.whenScaled'));
      }
      return errs;
    },
    validateUpdate(n, o) {
      const a = { ...specOf(n) };
      const b = { ...specOf(o) };
      for (const k of stsMutable) {
        delete a[k];
        delete b[k];
      }
      if (deepEqual(a, b)) return [];
      return [
        forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      ];
    },
    scale: scaleAccess(labelSelectorString),
  });
}

/**
 * The v1 face of the internal spec.templateGeneration (pkg/apis/apps/v1/conversion.go):
 * 1 on create unless a valid one is given, kept on updates, plus one when the
 * pod template changes. The DaemonSet controller labels pods with it
 * (pod-template-generation).
 */
const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

function templateGenerationOf(obj: KubeObject): number {
  const v = Number(obj.metadata?.annotations?.[TEMPLATE_GENERATION]);
  return Number.isInteger(v) && v >= 1 ? v : (obj.metadata?.generation ?? 1);
}

function setTemplateGeneration(obj: KubeObject, value: number): void {
  obj.metadata ??= {};
  obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [TEMPLATE_GENERATION]: String(value) };
}

function daemonSetStrategy(): Strategy {
  return newStrategy({
    group: 'apps',
    kind: 'DaemonSet',
    resource: 'daemonsets',
    namespaced: true,
    hasStatus: true,
    tracksGeneration: true,
    defaults(obj) {
      const s = child(obj, 'spec');
      const us = child(s, 'updateStrategy');
      dfltZero(us, 'type', 'RollingUpdate');
      if (us.type === 'RollingUpdate') {
        const ru = child(us, 'rollingUpdate');
        dflt(ru, 'maxUnavailable', 1);
        dflt(ru, 'maxSurge', 0);
      }
      dflt(s, 'revisionHistoryLimit', 10);
      defaultPodTemplate(s.template as never);
    },
    prepareForCreate(obj) {
      const given = Number(obj.metadata?.annotations?.[TEMPLATE_GENERATION]);
      setTemplateGeneration(obj, Number.isInteger(given) && given >= 1 ? given : 1);
    },
    prepareForUpdate(newObj, oldObj) {
      const old = templateGenerationOf(oldObj);
      setTemplateGeneration(newObj, deepEqual(specOf(newObj).template, specOf(oldObj).template) ? old : old + 1);
    },
    validate(obj) {
      const s = specOf(obj) as NonNullable<DaemonSet['spec']> & Obj;
      const errs = [
        ...validateSelectorAndTemplate(obj, 'daemonset'),
        ...validatePodTemplate(s.template, 'spec.template', ['Always']),
        ...nonNegative(s.revisionHistoryLimit, 'spec.revisionHistoryLimit'),
        ...nonNegative(s.minReadySeconds, 'spec.minReadySeconds'),
      ];
      const t = s.updateStrategy?.type;
      if (t !== undefined && t !== 'RollingUpdate' && t !== 'OnDelete') {
        errs.push(notSupported('spec.updateStrategy.type', t, ['OnDelete', 'RollingUpdate']));
      }
      if (t === 'RollingUpdate') errs.push(...validateRollingUpdate(s.updateStrategy?.rollingUpdate as Obj | undefined, 'spec.updateStrategy.rollingUpdate'));
      return errs;
    },
    validateUpdate: selectorImmutable,
  });
}

function controllerRevisionStrategy(): Strategy {
  return newStrategy({
    group: 'apps',
    kind: 'ControllerRevision',
    resource: 'controllerrevisions',
    namespaced: true,
    validate: (obj) => nonNegative(obj.revision as number | undefined, 'revision'),
    validateUpdate: (n, o) => immutable(n.data, o.data, 'data'),
  });
}

export function appsStrategies(): Strategy[] {
  return [deploymentStrategy(), replicaSetStrategy(), statefulSetStrategy(), daemonSetStrategy(), controllerRevisionStrategy()];
}

/** The StatefulSet's pod template with a volume for each claim template not already a volume (what its pods get). */
function withClaimTemplateVolumes(s: NonNullable<StatefulSet['spec']>): NonNullable<StatefulSet['spec']>['template'] | undefined {
  const t = s.template;
  const claims = (s.volumeClaimTemplates ?? []).map((c) => c.metadata?.name ?? '').filter((n) => n !== '');
  if (!t?.spec || claims.length === 0) return t;
  const have = new Set((t.spec.volumes ?? []).map((v) => v.name));
  const extra = claims.filter((n) => !have.has(n)).map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
  if (extra.length === 0) return t;
  return { ...t, spec: { ...t.spec, volumes: [...(t.spec.volumes ?? []), ...extra] } };
}
