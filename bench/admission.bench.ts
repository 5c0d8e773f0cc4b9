/**
 * What admission webhooks and CEL rules cost a write: creates of a custom
 * resource through the embedded API server over HTTP (kcm/testing's
 * startTestEnv, memory storage), in four setups:
 *
 * 1. plain: the CRD's OpenAPI schema only;
 * 2. 10 CEL rules: the same CRD with ten `x-kubernetes-validations` rules
 *    (string functions, list macros, quantities, a transition rule);
 * 3. 2 webhooks: one mutating (adds a label, JSON patch) and one validating,
 *    served over HTTPS by a kcm/runtime webhook server in a child process
 *    (so their CPU is not this process's);
 * 4. both.
 *
 * For each: sequential creates (latency p50/p99) and 16 in flight
 * (throughput). Run: node scripts/run-bench.mjs admission (after tsc).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeObject } from '../src/api/types.js';
import { startTestEnv, type TestEnv } from '../src/testing/test-env.js';
import { setLogOutput } from '../src/util/log/logger.js';

const SEQUENTIAL = 1000;
const CONCURRENT = 3000;
const IN_FLIGHT = 16;
const GROUP = 'bench.kcm.io';

const rules = [
  { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
  { rule: 'self.name.startsWith("w-")', message: 'name must start with w-' },
  { rule: 'self.tags.all(t, size(t) <= 32)', message: 'tags are at most 32 characters' },
  { rule: 'self.tags.size() <= 16', message: 'at most 16 tags' },
  { rule: '!has(self.image) || self.image.matches("^[a-z0-9./:-]+$")', message: 'invalid image' },
  { rule: 'quantity(self.memory).isLessThan(quantity("64Gi"))', message: 'memory below 64Gi' },
  { rule: 'self.ports.all(p, p > 0 && p < 65536)', message: 'ports are 1-65535' },
  { rule: 'self.ports.size() == 0 || self.ports.exists(p, p == 8080 || p == 443 || p < 1024)', message: 'a well-known port' },
  { rule: 'self.mode in ["fast", "safe", "auto"]', message: 'mode is fast, safe or auto' },
  { rule: 'self.name == oldSelf.name', message: 'name is immutable' },
];

function crd(withRules: boolean, plural: string): CustomResourceDefinition {
  const c = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind: plural[0]!.toUpperCase() + plural.slice(1, -1) },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  required: ['name', 'replicas', 'maxReplicas', 'tags', 'memory', 'ports', 'mode'],
                  ...(withRules ? { 'x-kubernetes-validations': rules } : {}),
                  properties: {
                    name: { type: 'string', maxLength: 63 },
                    replicas: { type: 'integer' },
                    maxReplicas: { type: 'integer' },
                    tags: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 64 } },
                    image: { type: 'string', maxLength: 256 },
                    memory: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
                    ports: { type: 'array', maxItems: 16, items: { type: 'integer' } },
                    mode: { type: 'string', maxLength: 8 },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  return c as unknown as CustomResourceDefinition;
}

const widget = (kind: string, i: number): KubeObject =>
  ({
    apiVersion: `${GROUP}/v1`,
    kind,
    metadata: { name: `w-${i}`, namespace: 'default' },
    spec: { name: `w-${i}`, replicas: 2, maxReplicas: 5, tags: ['a', 'b', 'c'], image: 'nginx:1.27', memory: '512Mi', ports: [80, 8080], mode: 'fast' },
  }) as KubeObject;

/** The webhook server child: prints its URL and CA, serves until killed. */
async function webhookChild(): Promise<void> {
  const { newWebhookServer } = await import('../src/runtime/webhook/server.js');
  setLogOutput(() => {});
  const server = newWebhookServer({ port: 0, host: '127.0.0.1' });
  server.register('/mutate', async (req) => ({
    uid: req.uid,
    allowed: true,
    patchType: 'JSONPatch',
    patch: Buffer.from(JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { mutated: 'true' } }])).toString('base64'),
  }));
  server.register('/validate', async (req) => ({ uid: req.uid, allowed: (req.object as { spec?: { replicas?: number } })?.spec?.replicas !== 99 }));
  void server.start(new AbortController().signal);
  await server.listening();
  process.send!({ url: server.url(), caBundle: Buffer.from(server.caBundle).toString('base64') });
}

function webhookConfigs(url: string, caBundle: string, plural: string): KubeObject[] {
  const rule = [{ apiGroups: [GROUP], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [plural] }];
  const common = { sideEffects: 'None', admissionReviewVersions: ['v1'], rules: rule, timeoutSeconds: 10 };
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: `bench-${plural}` }, webhooks: [{ name: 'mutate.bench.kcm.io', clientConfig: { url: `${url}/mutate`, caBundle }, ...common }] },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: `bench-${plural}` }, webhooks: [{ name: 'validate.bench.kcm.io', clientConfig: { url: `${url}/validate`, caBundle }, ...common }] },
  ] as unknown as KubeObject[];
}

const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(env: TestEnv, plural: string, kind: string): Promise<string> {
  const ri = env.client.resource<KubeObject>({ group: GROUP, version: 'v1', resource: plural }).namespace('default');
  for (let i = 0; i < 50; i++) await ri.create(widget(kind, 1_000_000 + i)); // warm-up
  const lat: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await ri.create(widget(kind, i));
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  let next = SEQUENTIAL;
  const end = SEQUENTIAL + CONCURRENT;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < end) await ri.create(widget(kind, next++));
    }),
  );
  const rate = CONCURRENT / ((performance.now() - t0) / 1000);
  return `sequential p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms; ${IN_FLIGHT} in flight ${Math.round(rate)} creates/s`;
}

export async function run(): Promise<string[]> {
  setLogOutput(() => {});
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--webhook-child'], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const hook = await new Promise<{ url: string; caBundle: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string; caBundle: string }));
    child.once('exit', (code) => reject(new Error(`the webhook server child exited (${code})`)));
  });
  const setups = [
    { name: 'plain', rules: false, webhooks: false },
    { name: '10 CEL rules', rules: true, webhooks: false },
    { name: '2 webhooks', rules: false, webhooks: true },
    { name: '2 webhooks + 10 CEL rules', rules: true, webhooks: true },
  ];
  const out: string[] = [];
  try {
    for (const [i, s] of setups.entries()) {
      const plural = `widget${i}s`;
      const kind = `Widget${i}`;
      const env = await startTestEnv({ crds: [crd(s.rules, plural)] });
      try {
        if (s.webhooks) {
          for (const c of webhookConfigs(hook.url, hook.caBundle, plural)) {
            const resource = c.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
            await env.client.resource<KubeObject>({ group: 'admissionregistration.k8s.io', version: 'v1', resource }).create(c);
          }
        }
        out.push(`${s.name}: ${await measure(env, plural, kind)}`);
      } finally {
        await env.stop();
      }
    }
  } finally {
    child.kill();
  }
  return out;
}

if (process.argv.includes('--webhook-child')) void webhookChild();
