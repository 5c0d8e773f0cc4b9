/**
 * `kcm proxy`: a kube-proxy that computes the rules it would program on one
 * node and prints them (docs/proxy.md).
 *
 *   kcm proxy --node NAME [--mode iptables|ipvs] --print    the rules once, after the caches synced
 *   kcm proxy --node NAME --watch                           then a diff after every (batched) sync
 */
import { hostname } from 'node:os';
import { newKubeClient } from '../client/client.js';
import { loadKubeconfig } from '../client/kubeconfig.js';
import { ApplyError, applyRules, checkApply, type ApplyTools } from '../proxy/apply.js';
import { isIPv4CIDR } from '../proxy/net.js';
import type { ProxyMode, SyncResult } from '../proxy/proxier.js';
import { NodeNotFoundError, runProxy } from '../proxy/run.js';
import { onTerminationSignal, parseCommandLine, setUpLogging } from './common.js';
import { FlagError, loggingFlags, type FlagSpec } from './flags.js';

export const proxyFlags = {
  kubeconfig: { type: 'string', default: '', usage: 'Path to a kubeconfig file (default: $KUBECONFIG or ~/.kube/config).', section: 'Generic' },
  node: {
    type: 'string',
    default: '',
    usage: "The node whose rules to compute, as kube-proxy's --hostname-override (default: this host's name).",
    section: 'Proxy',
  },
  mode: { type: 'string', default: 'iptables', oneOf: ['iptables', 'ipvs'], usage: 'Which proxy mode to compute: iptables or ipvs (userspace is legacy and not implemented).', section: 'Proxy' },
  print: { type: 'bool', default: false, usage: 'Print the rules once the caches have synced, then exit (the default when --watch is not given).', section: 'Proxy' },
  watch: { type: 'bool', default: false, usage: 'Print the rules, then the changed rules (-/+ per table) after every sync, until SIGINT or SIGTERM.', section: 'Proxy' },
  apply: {
    type: 'bool',
    default: false,
    usage: 'Also load the computed iptables tables into the network namespace kcm-proxy-<node> (created with ip netns add; never the host namespace). Needs root, ip and iptables-restore.',
    section: 'Proxy',
  },
  'cluster-cidr': {
    type: 'string',
    default: '',
    usage: "The CIDR range of pods in the cluster: traffic to a service from outside it is masqueraded. Empty: the node's spec.podCIDR if set, else no local traffic detection.",
    section: 'Proxy',
    typeName: 'cidr',
  },
  'masquerade-all': { type: 'bool', default: false, usage: 'SNAT all traffic sent via Service cluster IPs.', section: 'Proxy' },
  'iptables-masquerade-bit': { type: 'int', default: 14, usage: 'The bit of the fwmark space that marks packets requiring SNAT. Must be within [0, 31].', section: 'Proxy' },
  'iptables-min-sync-period': {
    type: 'duration',
    default: 1_000,
    usage: 'The minimum period between syncs when Services and EndpointSlices change (e.g. 5s, 1m); changes in between are batched.',
    section: 'Proxy',
  },
  'iptables-sync-period': { type: 'duration', default: 30_000, usage: 'The maximum period between syncs (e.g. 5s, 1m, 2h22m). Must be greater than 0.', section: 'Proxy' },
  'iptables-localhost-nodeports': { type: 'bool', default: true, usage: 'NodePorts are accepted on localhost (and KUBE-FIREWALL blocks other localnet traffic).', section: 'Proxy' },
  'ipvs-scheduler': { type: 'string', default: 'rr', usage: 'The ipvs scheduler (rr, wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq, mh).', section: 'Proxy' },
  ...loggingFlags,
} as const satisfies FlagSpec;

const IPVS_SCHEDULERS = ['rr', 'wrr', 'lc', 'wlc', 'lblc', 'lblcr', 'sh', 'dh', 'sed', 'nq', 'mh'];

const description =
  'Compute the iptables or IPVS rules kube-proxy would program on one node, from the Services, EndpointSlices and the Node ' +
  'of the cluster, and print them (iptables-save, ipvsadm -S -n and ipset save formats).';

export async function run(args: string[]): Promise<number> {
  const flags = parseCommandLine(proxyFlags, args, {
    command: 'kcm proxy',
    usageLine: 'kcm proxy [--node NAME] [--mode iptables|ipvs] [--print | --watch] [flags]',
    description,
    validate: (f) => {
      const v = f.values;
      if (v.print && v.watch) throw new FlagError('--print and --watch are mutually exclusive');
      if (v['cluster-cidr'] !== '' && !isIPv4CIDR(v['cluster-cidr'])) throw new FlagError(`invalid argument "${v['cluster-cidr']}" for "--cluster-cidr" flag: invalid IPv4 CIDR`);
      if (v['iptables-masquerade-bit'] < 0 || v['iptables-masquerade-bit'] > 31) throw new FlagError(`invalid argument "${v['iptables-masquerade-bit']}" for "--iptables-masquerade-bit" flag: must be within [0, 31]`);
      if (v['iptables-sync-period'] <= 0) throw new FlagError('--iptables-sync-period must be greater than 0');
      if (v['iptables-min-sync-period'] < 0) throw new FlagError('--iptables-min-sync-period must be greater than or equal to 0');
      if (!IPVS_SCHEDULERS.includes(v['ipvs-scheduler'])) throw new FlagError(`invalid argument "${v['ipvs-scheduler']}" for "--ipvs-scheduler" flag: must be one of ${IPVS_SCHEDULERS.join(', ')}`);
    },
  });
  if (typeof flags === 'number') return flags;
  const v = flags.values;
  const log = setUpLogging(v, 'proxy');
  const nodeName = (v.node || hostname()).toLowerCase();

  let tools: ApplyTools | undefined;
  if (v.apply) {
    try {
      tools = checkApply(v.mode);
    } catch (err) {
      if (err instanceof ApplyError) {
        process.stderr.write(`Error: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  }

  const config = await loadKubeconfig(v.kubeconfig ? { kubeconfig: v.kubeconfig } : {});
  const client = newKubeClient(config, { logger: log.child({}, 'client') });
  const ac = new AbortController();
  const removeSignal = onTerminationSignal(() => ac.abort(), { log, quietSecond: true });
  let applyFailure: ApplyError | undefined;
  try {
    await runProxy({
      client,
      nodeName,
      mode: v.mode as ProxyMode,
      clusterCIDR: v['cluster-cidr'],
      masqueradeAll: v['masquerade-all'],
      masqueradeBit: v['iptables-masquerade-bit'],
      ipvsScheduler: v['ipvs-scheduler'],
      localhostNodePorts: v['iptables-localhost-nodeports'],
      once: !v.watch,
      minSyncPeriodMs: v['iptables-min-sync-period'],
      syncPeriodMs: v['iptables-sync-period'],
      signal: ac.signal,
      write: (s) => process.stdout.write(s),
      logger: log,
      onSync: tools
        ? async (r: SyncResult) => {
            try {
              await applyRules(tools!, nodeName, r.sections.map((s) => s.lines.join('\n') + '\n').join(''));
            } catch (err) {
              if (!(err instanceof ApplyError)) throw err;
              applyFailure = err;
              ac.abort();
            }
          }
        : undefined,
    });
  } catch (err) {
    if (err instanceof NodeNotFoundError) {
      process.stderr.write(`Error: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    removeSignal();
    await client.close();
  }
  if (applyFailure) {
    process.stderr.write(`Error: ${applyFailure.message}\n`);
    return 1;
  }
  return 0;
}
