import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { startTestServer, type TestServer } from '../../apiserver/test-server.js';
import { newKubeClient, newRestConfig, type KubeClient } from '../../client/index.js';
import { newSharedInformerFactory } from '../../tools/cache/factory.js';
import { realClock } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import type { Schema } from '../../apiserver/crd/schema.js';
import type { TypeCheckerDeps } from '../../apiserver/admission/policy/type-checker.js';
import { descriptor, newValidatingAdmissionPolicyStatusController, validatingAdmissionPolicies } from './validatingadmissionpolicystatus-controller.js';

const deploymentRules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }];

function policy(name: string, generation: number, observed: number | undefined, validations: unknown[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name, generation },
    spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: deploymentRules, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} }, validations, ...extra },
    ...(observed !== undefined ? { status: { observedGeneration: observed } } : {}),
  };
}

const deploymentSchema: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
    spec: { type: 'object', properties: { replicas: { type: 'integer', format: 'int32' }, paused: { type: 'boolean' } } },
  },
};

const fakeChecker: TypeCheckerDeps = {
  schemas: { resolveSchema: async (gvk) => (gvk.group === 'apps' && gvk.kind === 'Deployment' ? deploymentSchema : undefined) },
  kinds: { kindsFor: async (gvr) => (gvr.group === 'apps' && gvr.resource === 'deployments' ? [{ group: 'apps', version: gvr.version, kind: 'Deployment' }] : []) },
};

describe('validatingadmissionpolicy-status controller', () => {
  before(() => setLogOutput(() => {}));

  it('writes observedGeneration and the type-checking warnings of policies not observed yet', async () => {
    const env = await setupController(
      (f) => {
        f.seed(
          validatingAdmissionPolicies,
          policy('typo', 2, 1, [{ expression: 'object.spec.replicaz <= 5', messageExpression: "'replicas: ' + string(object.spec.replicas)" }, { expression: 'object.spec.paused == 1' }]) as never,
          policy('fine', 1, undefined, [{ expression: 'object.spec.replicas <= 5' }]) as never,
          policy('observed', 3, 3, [{ expression: 'object.spec.nope' }]) as never,
        );
      },
      (ctx) => newValidatingAdmissionPolicyStatusController(ctx, { typeChecker: fakeChecker }),
    );
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    const stored = (name: string) => env.fake.stored(validatingAdmissionPolicies, '', name) as { status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } } } | undefined;
    await until(() => stored('typo')?.status?.observedGeneration === 2 && stored('fine')?.status?.observedGeneration === 1, 'statuses written');
    assert.deepEqual(stored('typo')!.status!.typeChecking!.expressionWarnings, [
      {
        fieldRef: 'spec.validations[0].expression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= 5\n | ...........^\n",
      },
      {
        fieldRef: 'spec.validations[1].expression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:20: found no matching overload for '_==_' applied to '(bool, int)'\n | object.spec.paused == 1\n | ...................^\n",
      },
    ]);
    assert.equal(stored('fine')!.status!.typeChecking!.expressionWarnings, undefined);
    // Already observed: left alone.
    assert.equal(stored('observed')!.status!.typeChecking, undefined);
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name, with five workers', () => {
    assert.equal(descriptor.name, 'validatingadmissionpolicy-status-controller');
    assert.deepEqual(descriptor.aliases, ['validatingadmissionpolicy-status']);
    assert.equal(descriptor.defaultWorkers, 5);
  });
});

describe('validatingadmissionpolicy-status controller against the embedded API server', () => {
  let s: TestServer;
  let client: KubeClient;

  before(async () => {
    setLogOutput(() => {});
    s = await startTestServer();
    client = newKubeClient(newRestConfig({ host: s.base, qps: -1 }), { clock: realClock });
  });
  after(async () => {
    await client.close();
    await s.close();
  });

  async function waitFor<T>(what: string, f: () => Promise<T | undefined>): Promise<T> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('type-checks against the served OpenAPI schemas and follows spec changes', async () => {
    const informers = newSharedInformerFactory(client, { clock: realClock });
    const ctx: ControllerContext = {
      client,
      discovery: client.discovery,
      informers,
      clock: realClock,
      options: { concurrency: {}, extra: {} } as unknown as ControllerOptions,
      recorder: () => ({}) as never,
      logger: (n) => newLogger(n),
    };
    const c = descriptor.create(ctx) as ReturnType<typeof newValidatingAdmissionPolicyStatusController>;
    const abort = new AbortController();
    informers.start(abort.signal);
    const run = c.run(2, abort.signal);
    try {
      const path = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
      const res = await s.request('POST', path, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'replicas.example.com' },
        spec: {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: deploymentRules },
          validations: [
            { expression: 'object.spec.replicaz <= 5' },
            { expression: "object.spec.template.spec.containers.all(c, c.image.startsWith('registry/'))", messageExpression: 'string(params.data.missing + 1)' },
          ],
        },
      });
      assert.equal(res.status, 201, res.text);
      type P = { metadata: { generation: number }; status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: { fieldRef: string; warning: string }[] } } };
      const first = await waitFor('observedGeneration 1', async () => {
        const p = (await s.request('GET', `${path}/replicas.example.com`)).body as P;
        return p.status?.observedGeneration === 1 ? p : undefined;
      });
      assert.deepEqual(first.status!.typeChecking!.expressionWarnings, [
        { fieldRef: 'spec.validations[0].expression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz <= 5\n | ...........^\n" },
        { fieldRef: 'spec.validations[1].messageExpression', warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:28: found no matching overload for '_+_' applied to '(string, int)'\n | string(params.data.missing + 1)\n | ...........................^\n" },
      ]);
      const upd = await s.request('PATCH', `${path}/replicas.example.com`, { spec: { validations: [{ expression: 'object.spec.replicas <= 5' }] } });
      assert.equal(upd.status, 200, upd.text);
      const second = await waitFor('observedGeneration 2 without warnings', async () => {
        const p = (await s.request('GET', `${path}/replicas.example.com`)).body as P;
        return p.status?.observedGeneration === 2 && !p.status.typeChecking?.expressionWarnings?.length ? p : undefined;
      });
      assert.equal(second.metadata.generation, 2);
      assert.deepEqual(second.status!.typeChecking?.expressionWarnings ?? [], []);
    } finally {
      // Stopped also when an assertion failed, so the test never hangs.
      abort.abort();
      await run;
      await informers.shutdown();
    }
  });
});
