import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { RuleWithOperations, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../api/types.js';
import { isInvalid, StatusError } from '../client/errors.js';
import { Type } from 'typebox';
import { defaultingWebhook, validatingWebhook } from '../runtime/webhook/admission.js';
import { conversionWebhook } from '../runtime/webhook/conversion.js';
import { customResourceDefinition, defineResource } from '../runtime/resource.js';
import { kinds } from '../runtime/kinds.js';
import { Site } from '../runtime/testdata/site-resource.js';
import { setLogOutput } from '../util/log/logger.js';
import { startTestEnv, type TestEnv } from './test-env.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

const gvrOf = (k: { group: string; version: string; plural: string }) => ({ group: k.group, version: k.version, resource: k.plural });
const site = (name: string, spec: Record<string, unknown>) => ({ apiVersion: Site.apiVersion, kind: Site.kind, metadata: { name, namespace: 'default' }, spec: { content: {}, domain: 'example.com', ...spec } }) as unknown as KubeObject;

describe('startTestEnv({ webhooks })', () => {
  let env: TestEnv;
  before(async () => {
    env = await startTestEnv({
      crds: [Site],
      webhooks: {
        admission: [
          {
            type: 'mutating',
            name: 'default.staticsites.sites.example.com',
            path: '/default-site',
            kind: Site,
            handler: defaultingWebhook(Site, (s) => {
              s.metadata!.labels = { ...s.metadata!.labels, 'sites.example.com/defaulted': 'true' };
              if (s.spec.tier === undefined) s.spec.tier = 'free';
            }),
          },
          {
            type: 'validating',
            name: 'validate.staticsites.sites.example.com',
            path: '/validate-site',
            kind: Site,
            handler: validatingWebhook(Site, {
              validateCreate: (s) => {
                if (s.spec.tier === 'pro' && s.spec.replicas < 2) throw new Error('a pro site needs at least 2 replicas');
                return s.spec.replicas > 10 ? ['more than 10 replicas is unusual'] : undefined;
              },
            }),
          },
        ],
        configurations: [
          {
            apiVersion: 'admissionregistration.k8s.io/v1',
            kind: 'ValidatingWebhookConfiguration',
            metadata: { name: 'from-manifest' },
            webhooks: [
              {
                name: 'vconfigmap.example.com',
                // As kubebuilder writes it: a service reference; the env points it at its own server, keeping the path.
                clientConfig: { service: { namespace: 'system', name: 'webhook-service', path: '/validate-configmap' } },
                rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] } as RuleWithOperations],
                sideEffects: 'None',
                admissionReviewVersions: ['v1'],
              },
            ],
          } satisfies ValidatingWebhookConfiguration,
        ],
      },
    });
    env.webhooks!.server.register(
      '/validate-configmap',
      validatingWebhook(kinds.ConfigMap, {
        validateCreate: (c) => {
          if (c.data?.forbidden !== undefined) throw new Error('key "forbidden" is not allowed');
        },
      }),
    );
  });
  after(async () => {
    await env.stop();
  });

  it('serves the webhooks from the test process with a generated certificate', () => {
    assert.match(env.webhooks!.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.match(env.webhooks!.caBundle, /BEGIN CERTIFICATE/);
  });

  it('runs the defaulting webhook on create', async () => {
    const created = (await env.client.resource<KubeObject & { spec: { tier?: string } }>(gvrOf(Site)).create(site('plain', { replicas: 1 }) as never)) as KubeObject & { spec: { tier?: string } };
    assert.equal(created.spec.tier, 'free');
    assert.equal(created.metadata?.labels?.['sites.example.com/defaulted'], 'true');
  });

  it('refuses what the validating webhook refuses, with the webhook message', async () => {
    await assert.rejects(
      env.client.resource(gvrOf(Site)).create(site('weak', { tier: 'pro', replicas: 1 }) as never),
      (err: unknown) => err instanceof StatusError && err.code === 403 && err.message === 'admission webhook "validate.staticsites.sites.example.com" denied the request: a pro site needs at least 2 replicas',
    );
    await env.client.resource(gvrOf(Site)).create(site('strong', { tier: 'pro', replicas: 2 }) as never);
  });

  it('still applies schema validation after mutation', async () => {
    await assert.rejects(env.client.resource(gvrOf(Site)).create(site('neg', { replicas: -1 }) as never), (err: unknown) => isInvalid(err));
  });

  it('installs configurations from manifests pointed at the env server', async () => {
    const cms = env.client.resource<KubeObject & { data?: Record<string, string> }>(gvrOf(kinds.ConfigMap));
    await cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ok', namespace: 'default' }, data: { a: '1' } });
    await assert.rejects(
      cms.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'no', namespace: 'default' }, data: { forbidden: '1' } }),
      /admission webhook "vconfigmap\.example\.com" denied the request: key "forbidden" is not allowed/,
    );
  });
});

// Two versions of different shape: v1 keeps a size in text ("10Mi"), v2 (stored) in bytes.
const DiskV1 = defineResource({ group: 'disks.example.com', version: 'v1', kind: 'Disk', storage: false, spec: Type.Object({ size: Type.String() }) });
const DiskV2 = defineResource({ group: 'disks.example.com', version: 'v2', kind: 'Disk', spec: Type.Object({ sizeBytes: Type.Integer() }) });

describe('startTestEnv({ webhooks: { conversion } })', () => {
  let env: TestEnv;
  let calls = 0;
  before(async () => {
    env = await startTestEnv({
      crds: [customResourceDefinition(DiskV1, DiskV2)],
      webhooks: {
        conversion: [
          {
            kind: DiskV2,
            handler: conversionWebhook((obj, to) => {
              calls++;
              const spec = obj.spec as Record<string, unknown>;
              if (to === 'disks.example.com/v2') return { ...obj, spec: { sizeBytes: Number(/^(\d+)Mi$/.exec(String(spec.size))![1]) * 1024 * 1024 } };
              return { ...obj, spec: { size: `${Number(spec.sizeBytes) / (1024 * 1024)}Mi` } };
            }),
          },
        ],
      },
    });
  });
  after(async () => {
    await env.stop();
  });

  it('points the CRD at the handler and converts between the versions through it', async () => {
    const crd = await env.client.resource<KubeObject & { spec: { conversion?: { strategy?: string } } }>({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }).get('disks.disks.example.com');
    assert.equal(crd.spec.conversion?.strategy, 'Webhook');
    const v1 = env.client.resource<KubeObject & { spec: { size?: string; sizeBytes?: number } }>(gvrOf(DiskV1)).namespace('default');
    const v2 = env.client.resource<KubeObject & { spec: { size?: string; sizeBytes?: number } }>(gvrOf(DiskV2)).namespace('default');
    await v1.create({ apiVersion: DiskV1.apiVersion, kind: 'Disk', metadata: { name: 'data' }, spec: { size: '10Mi' } });
    assert.deepEqual((await v2.get('data')).spec, { sizeBytes: 10 * 1024 * 1024 });
    assert.deepEqual((await v1.get('data')).spec, { size: '10Mi' });
    assert.ok(calls >= 2, `the handler converted (${calls} calls)`);
  });
});
