/**
 * x-kubernetes-validations through the embedded API server: CRDs whose
 * rules do not compile or cost too much are refused as kube-apiserver
 * refuses them, and custom resources are checked on create, update and
 * /status with kube-apiserver 1.33's messages (422 Invalid, one cause per
 * failed rule), transition rules, optionalOldSelf and ratcheting.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, eventually, type TestServer } from '../../test-server.js';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
type Obj = Record<string, unknown>;

function crd(plural: string, kind: string, schema: Obj, status = false): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.cel.example.com` },
    spec: {
      group: 'cel.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, ...(status ? { subresources: { status: {} } } : {}) }],
    },
  };
}

const widgetSchema: Obj = {
  type: 'object',
  'x-kubernetes-validations': [{ rule: "self.metadata.name != 'forbidden'", message: 'this name is not allowed' }],
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      'x-kubernetes-validations': [
        { rule: 'self.minReplicas <= self.replicas', message: 'replicas should be greater than or equal to minReplicas' },
        { rule: 'self.replicas <= oldSelf.replicas + 5', messageExpression: "'replicas may grow by 5 at most, not from %d to %d'.format([oldSelf.replicas, self.replicas])" },
        { rule: '!has(self.mode) || self.mode != "locked" || has(self.owner)', reason: 'FieldValueRequired', fieldPath: '.owner', message: 'owner is required in locked mode' },
        { rule: 'oldSelf.hasValue() || self.replicas < 100', optionalOldSelf: true, message: 'a new widget starts below 100 replicas' },
      ],
      properties: {
        replicas: { type: 'integer' },
        minReplicas: { type: 'integer' },
        mode: { type: 'string' },
        owner: { type: 'string' },
        name: { type: 'string', maxLength: 20, 'x-kubernetes-validations': [{ rule: 'self.startsWith("w-")', reason: 'FieldValueForbidden' }] },
        immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'Value is immutable' }] },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 1024' }] } } },
        },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0', message: 'ready must not be negative' }] } } },
  },
};

describe('x-kubernetes-validations in the API server', () => {
  let s: TestServer;
  const base = '/apis/cel.example.com/v1/namespaces/default/widgets';
  const widget = (name: string, spec: Obj): Obj => ({ apiVersion: 'cel.example.com/v1', kind: 'Widget', metadata: { name }, spec });
  before(async () => {
    s = await startTestServer();
    const res = await s.request('POST', crdPath, crd('widgets', 'Widget', widgetSchema, true));
    assert.equal(res.status, 201, res.text);
    await eventually(async () => (await s.request('GET', base)).status === 200);
  });
  after(async () => s.close());

  describe('CRD create', () => {
    const refused = async (schema: Obj): Promise<{ message: string; causes: { field: string; reason: string; message: string }[] }> => {
      const res = await s.request('POST', crdPath, crd('bads', 'Bad', schema));
      assert.equal(res.status, 422, res.text);
      return { message: res.body.message, causes: res.body.details.causes };
    };

    it('refuses a rule that does not compile, with cel-go message, source line and caret', async () => {
      const r = await refused({ type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self.foo == 1' }] } } });
      assert.equal(r.causes.length, 1);
      assert.equal(r.causes[0]!.field, 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule');
      assert.equal(
        r.causes[0]!.message,
        'Invalid value: apiextensions.ValidationRule{Rule:"self.foo == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: ' +
          "compilation failed: ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^",
      );
    });

    it('refuses a rule that is not a bool, an unknown reason, a bad fieldPath and a needless optionalOldSelf', async () => {
      const r = await refused({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: { a: { type: 'string' } },
            'x-kubernetes-validations': [{ rule: 'self.a' }, { rule: 'true', reason: 'Bogus' }, { rule: 'true', fieldPath: '.b' }],
          },
          other: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self.a' }] },
          status: { type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self.a == "x"', optionalOldSelf: true }] },
        },
      });
      const byField = Object.fromEntries(r.causes.map((c) => [c.field.replace('spec.versions[0].schema.openAPIV3Schema.', ''), c.message]));
      // rules of a node with other errors are not compiled (upstream skips them until those are fixed)
      assert.equal(byField['properties[spec].x-kubernetes-validations[0].rule'], undefined);
      assert.match(byField['properties[other].x-kubernetes-validations[0].rule']!, /^Invalid value: apiextensions\.ValidationRule\{Rule:"self\.a", .*\}: cel expression must evaluate to a bool$/);
      assert.equal(byField['properties[spec].x-kubernetes-validations[1].reason'], 'Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"');
      assert.equal(byField['properties[spec].x-kubernetes-validations[2].fieldPath'], 'Invalid value: ".b": fieldPath must be a valid path');
      assert.equal(byField['properties[status].x-kubernetes-validations[0].optionalOldSelf'], 'Invalid value: true: may not be set if oldSelf is not used in rule');
    });

    it('refuses a rule whose estimated cost exceeds the budget', async () => {
      const r = await refused({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: { list: { type: 'array', items: { type: 'string' } } },
            'x-kubernetes-validations': [{ rule: 'self.list.all(x, self.list.all(y, x == y))' }],
          },
        },
      });
      const c = r.causes.find((x) => x.field.endsWith('x-kubernetes-validations[0].rule'))!;
      assert.equal(c.reason, 'FieldValueForbidden');
      assert.match(c.message, /^Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/);
    });

    it('refuses oldSelf under a list that is not a map list', async () => {
      const r = await refused({
        type: 'object',
        properties: { spec: { type: 'object', properties: { l: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } } } } },
      });
      assert.equal(r.causes[0]!.message, 'Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l]');
    });
  });

  describe('custom resources', () => {
    const invalid = async (method: string, path: string, body: Obj): Promise<{ message: string; causes: { field: string; reason: string; message: string }[] }> => {
      const res = await s.request(method, path, body);
      assert.equal(res.status, 422, res.text);
      assert.equal(res.body.reason, 'Invalid');
      return { message: res.body.message, causes: res.body.details.causes };
    };

    it('accepts an object every rule allows', async () => {
      const res = await s.request('POST', base, widget('w1', { replicas: 3, minReplicas: 1, name: 'w-one', immutable: 'x', ports: [{ name: 'http', port: 8080 }] }));
      assert.equal(res.status, 201, res.text);
    });

    it('refuses a create with each failed rule as a cause, worded as kube-apiserver 1.33 words it', async () => {
      const r = await invalid('POST', base, widget('forbidden', { replicas: 1, minReplicas: 2, mode: 'locked', name: 'bad', ports: [{ name: 'a', port: 80 }] }));
      assert.deepEqual(
        r.causes.map((c) => [c.field, c.reason, c.message]),
        [
          ['<nil>', 'FieldValueInvalid', 'Invalid value: "object": this name is not allowed'],
          ['spec', 'FieldValueInvalid', 'Invalid value: "object": replicas should be greater than or equal to minReplicas'],
          ['spec.owner', 'FieldValueRequired', 'Required value: owner is required in locked mode'],
          ['spec.name', 'FieldValueForbidden', 'Forbidden: failed rule: self.startsWith("w-")'],
          ['spec.ports[0].port', 'FieldValueInvalid', 'Invalid value: "integer": failed rule: self > 1024'],
        ],
      );
      assert.equal(r.message.split(': [')[0], 'Widget.cel.example.com "forbidden" is invalid');
    });

    it('runs a rule with optionalOldSelf on create, and transition rules only on update', async () => {
      const r = await invalid('POST', base, widget('w2', { replicas: 150, minReplicas: 1 }));
      assert.deepEqual(r.causes.map((c) => c.message), ['Invalid value: "object": a new widget starts below 100 replicas']);
    });

    it('checks transition rules against the old object on update, with messageExpression', async () => {
      const cur = (await s.request('GET', `${base}/w1`)).body;
      const r = await invalid('PUT', `${base}/w1`, { ...cur, spec: { ...cur.spec, replicas: 20, immutable: 'y' } });
      assert.deepEqual(
        r.causes.map((c) => [c.field, c.message]),
        [
          ['spec', 'Invalid value: "object": replicas may grow by 5 at most, not from 3 to 20'],
          ['spec.immutable', 'Invalid value: "string": Value is immutable'],
        ],
      );
    });

    it('ratchets: a value that a newer rule refuses does not fail an update that leaves it unchanged', async () => {
      const res = await s.request('POST', base, widget('w3', { replicas: 1, minReplicas: 1, mode: 'legacy' }));
      assert.equal(res.status, 201, res.text);
      const rule = { rule: "self != 'legacy'", message: 'legacy mode is gone' };
      const p = await s.request('PATCH', `${crdPath}/widgets.cel.example.com`, [{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/mode/x-kubernetes-validations', value: [rule] }], {
        'Content-Type': 'application/json-patch+json',
      });
      assert.equal(p.status, 200, p.text);
      await eventually(async () => (await s.request('POST', base, widget('w5', { replicas: 1, minReplicas: 1, mode: 'legacy' }))).status === 422);
      const cur = (await s.request('GET', `${base}/w3`)).body;
      const upd = await s.request('PUT', `${base}/w3`, { ...cur, spec: { ...cur.spec, replicas: 2 } });
      assert.equal(upd.status, 200, upd.text);
      const r = await invalid('POST', base, widget('w6', { replicas: 1, minReplicas: 1, mode: 'legacy' }));
      assert.deepEqual(r.causes.map((c) => [c.field, c.message]), [['spec.mode', 'Invalid value: "string": legacy mode is gone']]);
    });

    it('validates /status updates with the same rules', async () => {
      const cur = (await s.request('GET', `${base}/w1`)).body;
      const r = await invalid('PUT', `${base}/w1/status`, { ...cur, status: { ready: -1 } });
      assert.deepEqual(r.causes.map((c) => [c.field, c.message]), [['status.ready', 'Invalid value: "integer": ready must not be negative']]);
      const ok = await s.request('PUT', `${base}/w1/status`, { ...cur, status: { ready: 2 } });
      assert.equal(ok.status, 200, ok.text);
    });

    it('does not run the rules when the schema already refused the object', async () => {
      const r = await invalid('POST', base, widget('w4', { replicas: 'many', minReplicas: 1 }));
      assert.deepEqual(
        r.causes.map((c) => c.field),
        ['spec.replicas', '<nil>'],
      );
      assert.equal(r.causes[1]!.message, 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation');
    });
  });
});
