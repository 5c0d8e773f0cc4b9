// A consumer of the kcm package, compiled with tsc --strict against the
// packed tarball and run by test/package/consumer.test.ts. It only uses
// kcm's public subpaths.
import assert from 'node:assert/strict';
import { parseQuantity, quantityToString, parseSelector } from 'kcm/api';
import { newSharedInformerFactory } from 'kcm/cache';
import { isNotFound, newKubeClient, typed, type KubeObject } from 'kcm/client';
import { defaultIdentity } from 'kcm/leaderelection';
import type { EventRecorder } from 'kcm/record';
import {
  Type,
  conditions,
  controller,
  defineResource,
  kinds,
  type ObjectOf,
  newManager,
  setControllerReference,
  setStatusCondition,
  createOrUpdate,
  setLogOutput,
} from 'kcm/runtime';
import { startTestEnv, validateResource } from 'kcm/testing';
import { newQueue } from 'kcm/workqueue';

// One definition: the type, the CRD and validation.
const Widget = defineResource({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  spec: Type.Object({ greeting: Type.String({ minLength: 1 }), replicas: Type.Optional(Type.Integer({ minimum: 0, default: 1 })) }),
  status: Type.Object({ conditions: Type.Optional(conditions()), observedGeneration: Type.Optional(Type.Integer()) }),
  printerColumns: [{ name: 'Greeting', type: 'string', jsonPath: '.spec.greeting' }],
});
type Widget = ObjectOf<typeof Widget>;

async function eventually(cond: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main(): Promise<void> {
  setLogOutput(() => {});
  assert.equal(quantityToString(parseQuantity('1.5Gi')), '1536Mi');
  assert.equal(parseSelector('app=web').matches({ app: 'web' }), true);
  assert.match(defaultIdentity(), /_/);
  const q = newQueue<string>();
  q.add('a');
  q.add('a');
  assert.equal(q.len(), 1);

  const invalid = validateResource(Widget, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' }, spec: { greeting: '', replicas: -1 } });
  assert.equal(invalid.errors.length, 2, invalid.errors.join('; '));

  const env = await startTestEnv({ crds: [Widget.crd()] });
  const client = newKubeClient(env.restConfig);
  try {
    const mgr = newManager({ name: 'widget-operator', restConfig: env.restConfig, leaderElection: { namespace: 'default' } });
    let recorder: EventRecorder | undefined;
    controller(mgr)
      .for(Widget)
      .owns(kinds.ConfigMap)
      .complete(async (ctx) => {
        recorder = ctx.recorder;
        const widget = await ctx.get();
        if (!widget) return;
        // Types flow from .for(Widget): spec.greeting is a string.
        const greeting: string = widget.spec.greeting;
        // @ts-expect-error a Widget has no data field
        void widget.data;
        const child = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${widget.metadata!.name}-greeting`, namespace: widget.metadata!.namespace } };
        await createOrUpdate(ctx.client, child as (typeof kinds.ConfigMap)['__object'] & object, (cm) => {
          setControllerReference(widget, cm);
          cm.data = { greeting };
        });
        const status = (widget.status ??= {});
        if (setStatusCondition(status, { type: 'Ready', status: 'True', reason: 'ConfigMapReady', message: 'greeting published', observedGeneration: widget.metadata!.generation! })) {
          status.observedGeneration = widget.metadata!.generation!;
          await ctx.client.updateStatus(widget);
          ctx.recorder.event(widget, 'Normal', 'Published', `greeting ${greeting}`);
        }
      });
    const ac = new AbortController();
    const running = mgr.start(ac.signal);

    const widgets = client.resource<Widget & KubeObject>({ group: Widget.group, version: Widget.version, resource: Widget.plural }).namespace('default');
    await widgets.create({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'hello' }, spec: { greeting: 'hi' } });
    await eventually(async () => {
      try {
        return (await typed(client).configMaps('default').get('hello-greeting')).data?.greeting === 'hi';
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    }, 'child ConfigMap');
    await eventually(async () => (await widgets.get('hello')).status?.conditions?.[0]?.reason === 'ConfigMapReady', 'Ready condition');
    const cm = await typed(client).configMaps('default').get('hello-greeting');
    assert.equal(cm.metadata?.ownerReferences?.[0]?.kind, 'Widget');
    assert.equal(cm.metadata?.ownerReferences?.[0]?.controller, true);
    assert.ok(recorder);

    const factory = newSharedInformerFactory(client);
    const seen: string[] = [];
    factory.configMaps().addEventHandler({ onAdd: (c) => seen.push(c.metadata?.name ?? '') });
    const fac = new AbortController();
    factory.start(fac.signal);
    await factory.waitForCacheSync(fac.signal);
    assert.ok(seen.includes('hello-greeting'));
    fac.abort();
    await factory.shutdown();

    ac.abort();
    await running;
  } finally {
    await client.close();
    await env.stop();
  }

  // Internal modules are not part of the package's surface.
  await assert.rejects(import('kcm/dist/src/apiserver/handler.js' as string), (err: NodeJS.ErrnoException) => err.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED');
  console.log('consumer ok');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
