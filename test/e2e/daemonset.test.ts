/**
 * DaemonSets with kubectl against `kcm up`: one pod per node, following node
 * labels, and an image rollout.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor, type KcmProcess } from './harness.js';
import { startCluster } from './cluster.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster();
});
after(async () => {
  await kcm?.stop();
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-n', 'default', '-f', '-'], { input: JSON.stringify(obj) });
const getJson = async (args: string[]) => JSON.parse(await kcm.kubectlOk(['get', '-o', 'json', ...args]));
/** The simulated nodes, once at least two have registered. */
const nodeNames = () =>
  waitFor(
    async () => {
      const names = ((await getJson(['nodes'])).items as Array<{ metadata: { name: string } }>).map((n) => n.metadata.name).sort();
      return names.length >= 2 ? names : undefined;
    },
    60_000,
    'simulated nodes',
  );

function ds(name: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'agent:1', command: ['sleep', 'infinity'] }], ...spec } },
    },
  };
}

interface P {
  metadata: { deletionTimestamp?: string };
  spec: { nodeName?: string; containers: Array<{ image: string }> };
  status?: { phase?: string };
}
async function pods(app: string): Promise<P[]> {
  return ((await getJson(['pods', '-n', 'default', '-l', `app=${app}`])).items as P[]).filter((p) => !p.metadata.deletionTimestamp);
}

describe('daemonset e2e', () => {
  it('places one pod per node and rolls out an image change', async () => {
    const nodes = await nodeNames();
    await apply(ds('agent'));
    await waitFor(
      async () => {
        const ps = await pods('agent');
        return ps.length === nodes.length && ps.every((p) => p.status?.phase === 'Running');
      },
      60_000,
      'one running pod per node',
    );
    assert.deepEqual((await pods('agent')).map((p) => p.spec.nodeName).sort(), nodes);
    const d = await getJson(['daemonset', '-n', 'default', 'agent']);
    await waitFor(async () => (await getJson(['daemonset', '-n', 'default', 'agent'])).status?.numberReady === nodes.length, 30_000, 'numberReady');
    assert.equal(d.status.desiredNumberScheduled, nodes.length);

    await kcm.kubectlOk(['set', 'image', '-n', 'default', 'daemonset/agent', 'c=agent:2']);
    await waitFor(
      async () => {
        const ps = await pods('agent');
        const s = (await getJson(['daemonset', '-n', 'default', 'agent'])).status;
        return ps.length === nodes.length && ps.every((p) => p.spec.containers[0]!.image === 'agent:2') && s?.updatedNumberScheduled === nodes.length && s?.numberAvailable === nodes.length;
      },
      120_000,
      'rollout finished',
    );
    const revs = (await getJson(['controllerrevisions', '-n', 'default', '-l', 'app=agent'])).items as unknown[];
    assert.equal(revs.length, 2);
  });

  it('follows node labels', async () => {
    const nodes = await nodeNames();
    const target = nodes[0]!;
    await apply(ds('picky', { nodeSelector: { 'e2e-role': 'picky' } }));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await pods('picky')).length, 0);
    await kcm.kubectlOk(['label', 'node', target, 'e2e-role=picky']);
    await waitFor(async () => (await pods('picky')).some((p) => p.spec.nodeName === target), 60_000, 'pod on labelled node');
    await kcm.kubectlOk(['label', 'node', target, 'e2e-role-']);
    await waitFor(async () => (await pods('picky')).length === 0, 60_000, 'pod removed after unlabel');
  });
});
