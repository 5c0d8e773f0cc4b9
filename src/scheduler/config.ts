/**
 * KubeSchedulerConfiguration (`kcm scheduler --config`, `kcm up
 * --scheduler-config`): profiles, each serving one schedulerName with the
 * default plugins enabled or disabled per extension point and score weights
 * changed; percentageOfNodesToScore; DefaultPreemption's and
 * NodeResourcesFit's arguments; leader election and client connection.
 *
 * Accepts kubescheduler.config.k8s.io v1beta1 (kube-scheduler 1.20), v1beta2,
 * v1beta3 and v1. Plugins merge with the defaults as upstream: `disabled`
 * (a name, or `*` for all) removes defaults at that extension point; an
 * `enabled` plugin that is a default replaces it in place (its weight), other
 * enabled plugins are appended; `multiPoint` (v1beta3, v1) enables a plugin
 * at every extension point it implements.
 */
import { parse as parseYaml } from 'yaml';
import type { FilterPlugin, PreBindPlugin, ReservePlugin, ScorePlugin, WeightedScorePlugin } from './framework.js';
import {
  balancedAllocation,
  imageLocality,
  interPodAffinityFilter,
  interPodAffinityScore,
  newNodeResourcesFitScore,
  newVolumeBinding,
  nodeAffinityFilter,
  nodeAffinityScore,
  nodeNamePlugin,
  nodePorts,
  nodeResourcesFitFilter,
  nodeUnschedulable,
  nodeVolumeLimits,
  podTopologySpreadFilter,
  podTopologySpreadScore,
  SCORED_RESOURCES,
  taintTolerationFilter,
  taintTolerationScore,
  volumeRestrictions,
  volumeZone,
  type ScoringStrategy,
} from './plugins/index.js';
import { DEFAULT_PREEMPTION_ARGS, PREEMPTION_PLUGIN, type PreemptionArgs } from './preemption.js';
import { DEFAULT_SCHEDULER_NAME, type Profile, type ProfileHandle } from './profile.js';

export const SCHEDULER_CONFIG_GROUP = 'kubescheduler.config.k8s.io';
const VERSIONS = ['v1beta1', 'v1beta2', 'v1beta3', 'v1'];

/** A configuration that cannot be used; the message says where and why. */
export class SchedulerConfigError extends Error {}

export interface SchedulerConfiguration {
  /** The profiles, built with the handle given to parseSchedulerConfiguration. */
  profiles: Profile[];
  /**
   * The same profiles built again for `handle` (the scheduler's client and
   * clock, known only after the file was checked), from the validated
   * document: the file is not read or parsed again.
   */
  profilesFor(handle: ProfileHandle): Profile[];
  percentageOfNodesToScore: number;
  leaderElection: {
    leaderElect?: boolean;
    leaseDurationMs?: number;
    renewDeadlineMs?: number;
    retryPeriodMs?: number;
    resourceName?: string;
    resourceNamespace?: string;
  };
  clientConnection: { kubeconfig?: string; qps?: number; burst?: number };
  /** The configuration as read, with defaults filled in (for /configz). */
  effective: Record<string, unknown>;
  /** Things accepted but not acted on (plugin arguments kcm does not implement, in-tree plugins it does not have). */
  warnings: string[];
}

type Point = 'queueSort' | 'preFilter' | 'filter' | 'postFilter' | 'preScore' | 'score' | 'reserve' | 'permit' | 'preBind' | 'bind' | 'postBind';
const POINTS: readonly Point[] = ['queueSort', 'preFilter', 'filter', 'postFilter', 'preScore', 'score', 'reserve', 'permit', 'preBind', 'bind', 'postBind'];

/** The extension points each in-tree plugin implements, and (for score) its default weight. */
const PLUGINS: Record<string, { points: readonly Point[]; weight?: number }> = {
  PrioritySort: { points: ['queueSort'] },
  NodeUnschedulable: { points: ['filter'] },
  NodeName: { points: ['filter'] },
  TaintToleration: { points: ['filter', 'preScore', 'score'], weight: 3 },
  NodeAffinity: { points: ['preFilter', 'filter', 'preScore', 'score'], weight: 2 },
  NodePorts: { points: ['preFilter', 'filter'] },
  NodeResourcesFit: { points: ['preFilter', 'filter', 'preScore', 'score'], weight: 1 },
  VolumeRestrictions: { points: ['preFilter', 'filter'] },
  NodeVolumeLimits: { points: ['filter'] },
  VolumeBinding: { points: ['preFilter', 'filter', 'reserve', 'preBind'] },
  VolumeZone: { points: ['preFilter', 'filter'] },
  PodTopologySpread: { points: ['preFilter', 'filter', 'preScore', 'score'], weight: 2 },
  InterPodAffinity: { points: ['preFilter', 'filter', 'preScore', 'score'], weight: 2 },
  DefaultPreemption: { points: ['postFilter'] },
  NodeResourcesBalancedAllocation: { points: ['preScore', 'score'], weight: 1 },
  ImageLocality: { points: ['score'], weight: 1 },
  DefaultBinder: { points: ['bind'] },
};

/**
 * Plugins of kube-scheduler 1.20's registry that kcm does not have: naming
 * them (usually to disable them) is accepted with a warning; they never run.
 */
const ABSENT_PLUGINS = new Set([
  'EBSLimits',
  'GCEPDLimits',
  'AzureDiskLimits',
  'CinderLimits',
  'SelectorSpread',
  'NodePreferAvoidPods',
  'NodeLabel',
  'ServiceAffinity',
  'RequestedToCapacityRatio',
]);

/** v1.20's separate resource scorers, which later became NodeResourcesFit's scoring strategies. */
const LEGACY_SCORERS: Record<string, ScoringStrategy['type']> = {
  NodeResourcesLeastAllocated: 'LeastAllocated',
  NodeResourcesMostAllocated: 'MostAllocated',
};

/** The default plugin set of every profile, per extension point, in order. */
function defaultPlugins(): Record<Point, Array<{ name: string; weight?: number }>> {
  const names = (...xs: string[]) => xs.map((name) => ({ name }));
  return {
    queueSort: names('PrioritySort'),
    preFilter: names('NodeAffinity', 'NodePorts', 'NodeResourcesFit', 'VolumeRestrictions', 'VolumeBinding', 'VolumeZone', 'PodTopologySpread', 'InterPodAffinity'),
    filter: names(
      'NodeUnschedulable',
      'NodeName',
      'TaintToleration',
      'NodeAffinity',
      'NodePorts',
      'NodeResourcesFit',
      'VolumeRestrictions',
      'NodeVolumeLimits',
      'VolumeBinding',
      'VolumeZone',
      'PodTopologySpread',
      'InterPodAffinity',
    ),
    postFilter: names('DefaultPreemption'),
    preScore: names('TaintToleration', 'NodeAffinity', 'NodeResourcesFit', 'PodTopologySpread', 'InterPodAffinity', 'NodeResourcesBalancedAllocation'),
    score: [
      { name: 'TaintToleration', weight: 3 },
      { name: 'NodeAffinity', weight: 2 },
      { name: 'NodeResourcesFit', weight: 1 },
      { name: 'PodTopologySpread', weight: 2 },
      { name: 'InterPodAffinity', weight: 2 },
      { name: 'NodeResourcesBalancedAllocation', weight: 1 },
      { name: 'ImageLocality', weight: 1 },
    ],
    reserve: names('VolumeBinding'),
    permit: [],
    preBind: names('VolumeBinding'),
    bind: names('DefaultBinder'),
    postBind: [],
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(path: string, message: string): never {
  throw new SchedulerConfigError(`${path}: ${message}`);
}

function optionalObject(v: unknown, path: string): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) fail(path, 'must be an object');
  return v;
}

function optionalList(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) fail(path, 'must be a list');
  return v;
}

function int(v: unknown, path: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(path, `Invalid value: ${JSON.stringify(v)}: must be an integer`);
  if (v < min || v > max) fail(path, `Invalid value: ${v}: not in valid range [${min}-${max}]`);
  return v;
}

/** A Go duration ("15s", "1m30s", "500ms") in milliseconds. */
function duration(v: unknown, path: string): number {
  if (typeof v !== 'string') fail(path, `Invalid value: ${JSON.stringify(v)}: must be a duration such as "15s"`);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * unit[m[2]!]!;
    end = re.lastIndex;
  }
  if (v.length === 0 || end !== v.length) fail(path, `Invalid value: ${JSON.stringify(v)}: must be a duration such as "15s"`);
  return total;
}

interface PluginRef {
  name: string;
  weight?: number;
}

function pluginList(v: unknown, path: string): PluginRef[] {
  return optionalList(v, path).map((x, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(x) || typeof x.name !== 'string' || x.name === '') fail(`${p}.name`, 'Required value');
    const ref: PluginRef = { name: x.name };
    if (x.weight !== undefined && x.weight !== null) ref.weight = int(x.weight, `${p}.weight`, 0, 100);
    return ref;
  });
}

function knownPlugin(name: string, path: string, warnings: string[]): boolean {
  if (PLUGINS[name] || LEGACY_SCORERS[name]) return true;
  if (ABSENT_PLUGINS.has(name)) {
    warnings.push(`${path}: plugin ${JSON.stringify(name)} is not implemented by kcm and is ignored`);
    return false;
  }
  fail(path, `plugin ${JSON.stringify(name)} does not exist`);
}

/** mergePluginSet: the defaults less the disabled ones, enabled ones replacing defaults in place or appended. */
function mergeSet(defaults: readonly PluginRef[], enabled: readonly PluginRef[], disabled: readonly PluginRef[]): PluginRef[] {
  const off = new Set(disabled.map((d) => d.name));
  const custom = new Map(enabled.map((e, i) => [e.name, { e, i }]));
  const replaced = new Set<number>();
  const out: PluginRef[] = [];
  if (!off.has('*')) {
    for (const d of defaults) {
      if (off.has(d.name)) continue;
      const c = custom.get(d.name);
      if (c) {
        replaced.add(c.i);
        out.push({ name: d.name, weight: c.e.weight || d.weight });
      } else out.push(d);
    }
  }
  enabled.forEach((e, i) => {
    if (!replaced.has(i)) out.push(e);
  });
  return out;
}

interface PluginArgs {
  preemption: PreemptionArgs;
  fitStrategy?: ScoringStrategy;
}

function preemptionArgs(args: Record<string, unknown>, path: string): PreemptionArgs {
  const out = { ...DEFAULT_PREEMPTION_ARGS };
  if (args.minCandidateNodesPercentage !== undefined) out.minCandidateNodesPercentage = int(args.minCandidateNodesPercentage, `${path}.minCandidateNodesPercentage`, 0, 100);
  if (args.minCandidateNodesAbsolute !== undefined) out.minCandidateNodesAbsolute = int(args.minCandidateNodesAbsolute, `${path}.minCandidateNodesAbsolute`, 0, Number.MAX_SAFE_INTEGER);
  if (out.minCandidateNodesPercentage === 0 && out.minCandidateNodesAbsolute === 0) {
    fail(path, 'Invalid value: minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero');
  }
  return out;
}

function fitStrategy(args: Record<string, unknown>, path: string): ScoringStrategy | undefined {
  const s = args.scoringStrategy;
  if (s === undefined || s === null) return undefined;
  if (!isObject(s)) fail(`${path}.scoringStrategy`, 'must be an object');
  const type = s.type ?? 'LeastAllocated';
  if (type !== 'LeastAllocated' && type !== 'MostAllocated') {
    fail(`${path}.scoringStrategy.type`, `Unsupported value: ${JSON.stringify(type)}: supported values: "LeastAllocated", "MostAllocated"`);
  }
  const resources =
    s.resources === undefined
      ? SCORED_RESOURCES
      : optionalList(s.resources, `${path}.scoringStrategy.resources`).map((r, i) => {
          const p = `${path}.scoringStrategy.resources[${i}]`;
          if (!isObject(r) || typeof r.name !== 'string' || r.name === '') fail(`${p}.name`, 'Required value');
          return { name: r.name, weight: r.weight === undefined ? 1 : int(r.weight, `${p}.weight`, 1, 100) };
        });
  return { type, resources };
}

function pluginArgs(list: unknown[], path: string, warnings: string[]): PluginArgs {
  const out: PluginArgs = { preemption: DEFAULT_PREEMPTION_ARGS };
  const seen = new Set<string>();
  list.forEach((x, i) => {
    const p = `${path}[${i}]`;
    if (!isObject(x) || typeof x.name !== 'string' || x.name === '') fail(`${p}.name`, 'Required value');
    if (seen.has(x.name)) fail(`${p}.name`, `Duplicate value: ${JSON.stringify(x.name)}`);
    seen.add(x.name);
    const args = optionalObject(x.args, `${p}.args`);
    if (x.name === PREEMPTION_PLUGIN) out.preemption = preemptionArgs(args, `${p}.args`);
    else if (x.name === 'NodeResourcesFit') {
      out.fitStrategy = fitStrategy(args, `${p}.args`);
      const other = Object.keys(args).filter((k) => k !== 'scoringStrategy' && k !== 'kind' && k !== 'apiVersion');
      if (other.length > 0) warnings.push(`${p}.args: ${other.join(', ')} not implemented by kcm; ignored`);
    } else if (PLUGINS[x.name] || ABSENT_PLUGINS.has(x.name) || LEGACY_SCORERS[x.name]) {
      const given = Object.keys(args).filter((k) => k !== 'kind' && k !== 'apiVersion');
      if (given.length > 0) warnings.push(`${p}.args: arguments of ${x.name} are not implemented by kcm; ignored`);
    } else fail(`${p}.name`, `plugin ${JSON.stringify(x.name)} does not exist`);
  });
  return out;
}

function buildProfile(raw: Record<string, unknown>, path: string, handle: ProfileHandle, warnings: string[]): { profile: Profile; effective: Record<string, unknown> } {
  const schedulerName = raw.schedulerName;
  if (typeof schedulerName !== 'string' || schedulerName === '') fail(`${path}.schedulerName`, 'Required value');
  const plugins = optionalObject(raw.plugins, `${path}.plugins`);
  for (const k of Object.keys(plugins)) if (!POINTS.includes(k as Point) && k !== 'multiPoint') fail(`${path}.plugins.${k}`, 'unknown extension point');
  const defaults = defaultPlugins();
  const multi = optionalObject(plugins.multiPoint, `${path}.plugins.multiPoint`);
  const multiEnabled = pluginList(multi.enabled, `${path}.plugins.multiPoint.enabled`);
  const multiDisabled = pluginList(multi.disabled, `${path}.plugins.multiPoint.disabled`);
  for (const [i, p] of multiEnabled.entries()) knownPlugin(p.name, `${path}.plugins.multiPoint.enabled[${i}]`, warnings);
  const sets = {} as Record<Point, PluginRef[]>;
  for (const point of POINTS) {
    const set = optionalObject(plugins[point], `${path}.plugins.${point}`);
    const enabled = pluginList(set.enabled, `${path}.plugins.${point}.enabled`).filter((p, i) => {
      const at = `${path}.plugins.${point}.enabled[${i}]`;
      if (!knownPlugin(p.name, at, warnings)) return false;
      const legacy = LEGACY_SCORERS[p.name];
      const implemented = legacy ? point === 'score' : PLUGINS[p.name]!.points.includes(point);
      if (!implemented) fail(at, `plugin ${JSON.stringify(p.name)} does not extend ${point} plugin`);
      if (point === 'score' && p.weight === undefined) p.weight = PLUGINS[p.name]?.weight ?? 1;
      return true;
    });
    const ownDisabled = pluginList(set.disabled, `${path}.plugins.${point}.disabled`);
    ownDisabled.forEach((p, i) => p.name === '*' || knownPlugin(p.name, `${path}.plugins.${point}.disabled[${i}]`, warnings));
    const disabled = [...multiDisabled, ...ownDisabled];
    // multiPoint enables a plugin wherever it applies, after the point's own list.
    const fromMulti = multiEnabled.filter((p) => PLUGINS[p.name]?.points.includes(point) && !enabled.some((e) => e.name === p.name));
    const withWeights = fromMulti.map((p) => (point === 'score' ? { name: p.name, weight: p.weight || PLUGINS[p.name]!.weight || 1 } : { name: p.name }));
    sets[point] = mergeSet(defaults[point], [...enabled, ...withWeights], disabled);
  }
  const args = pluginArgs(optionalList(raw.pluginConfig, `${path}.pluginConfig`), `${path}.pluginConfig`, warnings);
  const pct = raw.percentageOfNodesToScore === undefined || raw.percentageOfNodesToScore === null ? undefined : int(raw.percentageOfNodesToScore, `${path}.percentageOfNodesToScore`, 0, 100);

  const volumeBinding = newVolumeBinding({ client: handle.client, clock: handle.clock, bindTimeoutMs: handle.bindTimeoutMs });
  const filterImpl: Record<string, FilterPlugin> = {
    NodeUnschedulable: nodeUnschedulable,
    NodeName: nodeNamePlugin,
    TaintToleration: taintTolerationFilter,
    NodeAffinity: nodeAffinityFilter,
    NodePorts: nodePorts,
    NodeResourcesFit: nodeResourcesFitFilter,
    VolumeRestrictions: volumeRestrictions,
    NodeVolumeLimits: nodeVolumeLimits,
    VolumeBinding: volumeBinding,
    VolumeZone: volumeZone,
    PodTopologySpread: podTopologySpreadFilter,
    InterPodAffinity: interPodAffinityFilter,
  };
  const scoreImpl = (name: string): ScorePlugin => {
    const legacy = LEGACY_SCORERS[name];
    if (legacy) return newNodeResourcesFitScore({ type: legacy, resources: args.fitStrategy?.resources ?? SCORED_RESOURCES });
    const impl: Record<string, ScorePlugin> = {
      TaintToleration: taintTolerationScore,
      NodeAffinity: nodeAffinityScore,
      NodeResourcesFit: newNodeResourcesFitScore(args.fitStrategy),
      PodTopologySpread: podTopologySpreadScore,
      InterPodAffinity: interPodAffinityScore,
      NodeResourcesBalancedAllocation: balancedAllocation,
      ImageLocality: imageLocality,
    };
    return impl[name]!;
  };
  const filters = sets.filter.map((p) => filterImpl[p.name]!);
  const scores: WeightedScorePlugin[] = sets.score.map((p) => ({ plugin: scoreImpl(p.name), weight: p.weight ?? 1 }));
  const reserves: ReservePlugin[] = sets.reserve.some((p) => p.name === 'VolumeBinding') ? [volumeBinding] : [];
  const preBinds: PreBindPlugin[] = sets.preBind.some((p) => p.name === 'VolumeBinding') ? [volumeBinding] : [];
  const preemption = sets.postFilter.some((p) => p.name === PREEMPTION_PLUGIN) ? args.preemption : undefined;
  if (!sets.bind.some((p) => p.name === 'DefaultBinder')) fail(`${path}.plugins.bind`, 'at least one bind plugin is needed (DefaultBinder)');
  const profile: Profile = {
    schedulerName,
    filters,
    scores,
    reserves,
    preBinds,
    ...(preemption ? { preemption } : {}),
    ...(pct !== undefined ? { percentageOfNodesToScore: pct } : {}),
  };
  const effective: Record<string, unknown> = {
    schedulerName,
    plugins: Object.fromEntries(POINTS.map((point) => [point, { enabled: sets[point] }])),
    pluginConfig: [
      { name: PREEMPTION_PLUGIN, args: { ...args.preemption } },
      ...(args.fitStrategy ? [{ name: 'NodeResourcesFit', args: { scoringStrategy: args.fitStrategy } }] : []),
    ],
    ...(pct !== undefined ? { percentageOfNodesToScore: pct } : {}),
  };
  return { profile, effective };
}

/** A profile with the default plugins (the default profile when `schedulerName` is default-scheduler). */
export function profileWithDefaults(schedulerName: string, handle: ProfileHandle = {}): Profile {
  return buildProfile({ schedulerName }, 'profile', handle, []).profile;
}

/** Parses and validates a KubeSchedulerConfiguration (YAML or JSON). Throws SchedulerConfigError. */
export function parseSchedulerConfiguration(text: string, handle: ProfileHandle = {}): SchedulerConfiguration {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new SchedulerConfigError(`not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isObject(doc)) throw new SchedulerConfigError('not a KubeSchedulerConfiguration object');
  const apiVersion = doc.apiVersion;
  if (typeof apiVersion !== 'string' || !VERSIONS.some((v) => apiVersion === `${SCHEDULER_CONFIG_GROUP}/${v}`)) {
    throw new SchedulerConfigError(
      `no kind "KubeSchedulerConfiguration" is registered for version ${JSON.stringify(apiVersion ?? '')}; use one of ${VERSIONS.map((v) => `${SCHEDULER_CONFIG_GROUP}/${v}`).join(', ')}`,
    );
  }
  if (doc.kind !== 'KubeSchedulerConfiguration') throw new SchedulerConfigError(`kind ${JSON.stringify(doc.kind ?? '')} is not KubeSchedulerConfiguration`);
  const warnings: string[] = [];
  const percentageOfNodesToScore =
    doc.percentageOfNodesToScore === undefined || doc.percentageOfNodesToScore === null ? 0 : int(doc.percentageOfNodesToScore, 'percentageOfNodesToScore', 0, 100);

  const rawProfiles = optionalList(doc.profiles, 'profiles');
  const profilesIn: Record<string, unknown>[] = rawProfiles.length === 0 ? [{}] : rawProfiles.map((p, i) => optionalObject(p, `profiles[${i}]`));
  // A single profile without a name is the default scheduler (SetDefaults_KubeSchedulerConfiguration).
  if (profilesIn.length === 1 && (profilesIn[0]!.schedulerName === undefined || profilesIn[0]!.schedulerName === null)) {
    profilesIn[0] = { ...profilesIn[0], schedulerName: DEFAULT_SCHEDULER_NAME };
  }
  const seen = new Set<string>();
  const profiles: Profile[] = [];
  const effectiveProfiles: Record<string, unknown>[] = [];
  profilesIn.forEach((raw, i) => {
    const { profile, effective } = buildProfile(raw, `profiles[${i}]`, handle, warnings);
    if (seen.has(profile.schedulerName)) fail(`profiles[${i}].schedulerName`, `Duplicate value: ${JSON.stringify(profile.schedulerName)}`);
    seen.add(profile.schedulerName);
    profiles.push(profile);
    effectiveProfiles.push(effective);
  });

  const le = optionalObject(doc.leaderElection, 'leaderElection');
  const leaderElection: SchedulerConfiguration['leaderElection'] = {};
  if (le.leaderElect !== undefined) {
    if (typeof le.leaderElect !== 'boolean') fail('leaderElection.leaderElect', 'must be true or false');
    leaderElection.leaderElect = le.leaderElect;
  }
  if (le.leaseDuration !== undefined) leaderElection.leaseDurationMs = duration(le.leaseDuration, 'leaderElection.leaseDuration');
  if (le.renewDeadline !== undefined) leaderElection.renewDeadlineMs = duration(le.renewDeadline, 'leaderElection.renewDeadline');
  if (le.retryPeriod !== undefined) leaderElection.retryPeriodMs = duration(le.retryPeriod, 'leaderElection.retryPeriod');
  if (typeof le.resourceName === 'string' && le.resourceName) leaderElection.resourceName = le.resourceName;
  if (typeof le.resourceNamespace === 'string' && le.resourceNamespace) leaderElection.resourceNamespace = le.resourceNamespace;
  const cc = optionalObject(doc.clientConnection, 'clientConnection');
  const clientConnection: SchedulerConfiguration['clientConnection'] = {};
  if (typeof cc.kubeconfig === 'string' && cc.kubeconfig) clientConnection.kubeconfig = cc.kubeconfig;
  if (cc.qps !== undefined) {
    if (typeof cc.qps !== 'number' || cc.qps <= 0) fail('clientConnection.qps', `Invalid value: ${JSON.stringify(cc.qps)}: must be positive`);
    clientConnection.qps = cc.qps;
  }
  if (cc.burst !== undefined) clientConnection.burst = int(cc.burst, 'clientConnection.burst', 1, Number.MAX_SAFE_INTEGER);

  return {
    profiles,
    percentageOfNodesToScore,
    leaderElection,
    clientConnection,
    effective: { apiVersion, kind: 'KubeSchedulerConfiguration', percentageOfNodesToScore, profiles: effectiveProfiles },
    warnings,
    profilesFor: (h) => profilesIn.map((raw, i) => buildProfile(raw, `profiles[${i}]`, h, []).profile),
  };
}
