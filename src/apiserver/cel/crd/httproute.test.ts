/**
 * Gateway API's HTTPRoute CRD (standard channel, 178 CEL rules) in the
 * embedded API server: it installs, and the invalid routes of gateway-api's
 * own CEL tests (tests/cel/httproute_test.go) are refused with the messages
 * kube-apiserver gives, the valid ones accepted. The objects are what the
 * Go client sends for those tests' structs (omitempty fields left out).
 *
 * The CRD is test data kept outside the repository, in
 * ../shared/reference/gateway-api/ (gateway-api at the commit in COMMIT
 * there); the suite is skipped when it is absent.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { startTestServer, eventually, type TestServer } from '../../test-server.js';

const crdFile = fileURLToPath(new URL('../../../../../../shared/reference/gateway-api/gateway.networking.k8s.io_httproutes.yaml', import.meta.url));
const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const routes = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';

type Obj = Record<string, unknown>;

interface Case {
  name: string;
  spec: Obj;
  wantErrors?: string[];
}

const backend = { name: 'test', port: 8080 };
const rule = (r: Obj): Obj => ({ rules: [r] });
const pathMatch = (type: string, value: string): Obj => rule({ matches: [{ path: { type, value } }], backendRefs: [backend] });
const filter = (f: Obj): Obj => rule({ filters: [f] });
const pathModifier = (p: Obj): Obj => rule({ filters: [{ type: 'URLRewrite', urlRewrite: { path: p } }] });
const cors = (c: Obj): Obj => rule({ filters: [{ type: 'CORS', cors: c }] });
const replacePrefix = { type: 'ReplacePrefixMatch', replacePrefixMatch: 'foo' };

const cases: Case[] = [
  // TestHTTPPathMatch
  { name: 'path does not start with /', spec: pathMatch('PathPrefix', 'foo'), wantErrors: ["value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"] },
  { name: 'prefix ends with /.', spec: pathMatch('PathPrefix', '/.'), wantErrors: ["must not end with '/.' when type one of ['Exact', 'PathPrefix']"] },
  { name: 'exact contains /./', spec: pathMatch('Exact', '/foo/./bar'), wantErrors: ["must not contain '/./' when type one of ['Exact', 'PathPrefix']"] },
  { name: 'unknown path type', spec: pathMatch('FooBar', '/path'), wantErrors: ['supported values: "Exact", "PathPrefix", "RegularExpression"'] },
  { name: 'regular expression not checked as a path', spec: pathMatch('RegularExpression', '/foo/./bar') },
  { name: 'valid prefix', spec: pathMatch('PathPrefix', '/path') },
  { name: 'special characters', spec: pathMatch('Exact', "/abc/123'/a-b-c/d@gmail/%0A") },
  {
    name: 'invalid characters',
    spec: pathMatch('PathPrefix', '/[]'),
    wantErrors: ["must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']"],
  },
  // TestBackendObjectReference
  { name: 'default group and kind with port', spec: rule({ backendRefs: [{ name: 'backend', port: 99 }] }) },
  { name: 'default group and kind without port', spec: rule({ backendRefs: [{ name: 'backend' }] }), wantErrors: ['Must have port for Service reference'] },
  { name: 'explicit Service without port', spec: rule({ backendRefs: [{ group: '', kind: 'Service', name: 'backend' }] }), wantErrors: ['Must have port for Service reference'] },
  { name: 'other kind without port', spec: rule({ backendRefs: [{ group: 'foo.example.com', kind: 'Foo', name: 'backend' }] }) },
  // TestHTTPRouteFilter
  {
    name: 'RequestHeaderModifier with requestMirror',
    spec: filter({ type: 'RequestHeaderModifier', requestMirror: { backendRef: { name: '' } } }),
    wantErrors: ['filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type', 'filter.requestMirror must be nil if the filter.type is not RequestMirror'],
  },
  { name: 'RequestHeaderModifier without value', spec: filter({ type: 'RequestHeaderModifier' }), wantErrors: ['filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type'] },
  {
    name: 'RequestMirror with requestHeaderModifier',
    spec: filter({ type: 'RequestMirror', requestHeaderModifier: {} }),
    wantErrors: ['filter.requestHeaderModifier must be nil if the filter.type is not RequestHeaderModifier', 'filter.requestMirror must be specified for RequestMirror filter.type'],
  },
  {
    name: 'valid RequestHeaderModifier',
    spec: filter({ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'name', value: 'foo' }], add: [{ name: 'add', value: 'foo' }], remove: ['remove'] } }),
  },
  { name: 'URLRewrite without value', spec: filter({ type: 'URLRewrite' }), wantErrors: ['filter.urlRewrite must be specified for URLRewrite filter.type'] },
  // TestHTTPRouteRule
  {
    name: 'request redirect together with backendRefs',
    spec: rule({ filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }], backendRefs: [backend] }),
    wantErrors: ['RequestRedirect filter must not be used together with backendRefs'],
  },
  {
    name: 'valid URLRewrite with one PathPrefix match',
    spec: rule({ matches: [{ path: { type: 'PathPrefix', value: '/foo' } }], filters: [{ type: 'URLRewrite', urlRewrite: { path: replacePrefix } }] }),
  },
  {
    name: 'URLRewrite replacePrefixMatch with two matches',
    spec: rule({
      matches: [{ path: { type: 'PathPrefix', value: '/foo' } }, { path: { type: 'PathPrefix', value: '/bar' } }],
      filters: [{ type: 'URLRewrite', urlRewrite: { path: replacePrefix } }],
    }),
    wantErrors: ['When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified'],
  },
  {
    name: 'RequestRedirect replacePrefixMatch with an Exact match',
    spec: rule({ matches: [{ path: { type: 'Exact', value: '/foo' } }], filters: [{ type: 'RequestRedirect', requestRedirect: { path: replacePrefix } }] }),
    wantErrors: ['When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified'],
  },
  {
    name: 'backendRef URLRewrite replacePrefixMatch with two matches',
    spec: rule({
      matches: [{ path: { type: 'PathPrefix', value: '/foo' } }, { path: { type: 'PathPrefix', value: '/bar' } }],
      backendRefs: [{ ...backend, filters: [{ type: 'URLRewrite', urlRewrite: { path: replacePrefix } }] }],
    }),
    wantErrors: ['Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified'],
  },
  {
    name: 'both redirect and rewrite',
    spec: rule({
      matches: [{ path: { type: 'PathPrefix', value: '/foo' } }],
      filters: [
        { type: 'URLRewrite', urlRewrite: { path: replacePrefix } },
        { type: 'RequestRedirect', requestRedirect: { path: replacePrefix } },
      ],
    }),
    wantErrors: ['May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both'],
  },
  {
    name: 'repeated URLRewrite',
    spec: rule({
      matches: [{ path: { type: 'PathPrefix', value: '/foo' } }],
      filters: [
        { type: 'URLRewrite', urlRewrite: { path: replacePrefix } },
        { type: 'URLRewrite', urlRewrite: { path: replacePrefix } },
      ],
    }),
    wantErrors: ['URLRewrite filter cannot be repeated'],
  },
  {
    name: 'too many matches across rules',
    spec: { rules: Array.from({ length: 7 }, () => ({ matches: Array.from({ length: 20 }, () => ({ path: { type: 'PathPrefix', value: '/' } })) })) },
    wantErrors: ['total number of matches across all rules in a route must be less than 128'],
  },
  // TestHTTPPathModifier
  { name: 'valid ReplaceFullPath', spec: pathModifier({ type: 'ReplaceFullPath', replaceFullPath: 'foo' }) },
  { name: 'ReplaceFullPath without replaceFullPath', spec: pathModifier({ type: 'ReplaceFullPath' }), wantErrors: ["replaceFullPath must be specified when type is set to 'ReplaceFullPath'"] },
  { name: 'replaceFullPath with another type', spec: pathModifier({ type: 'ReplacePrefixMatch', replaceFullPath: 'foo' }), wantErrors: ["type must be 'ReplaceFullPath' when replaceFullPath is set"] },
  { name: 'ReplacePrefixMatch without value', spec: pathModifier({ type: 'ReplacePrefixMatch' }), wantErrors: ["replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"] },
  // TestHTTPRouteCORS
  { name: 'valid CORS origins', spec: cors({ allowOrigins: ['https://xpto.com', 'http://*.abcd.com', 'http://*.abcd.com:12345', 'https://*:443', 'https://*'] }) },
  { name: 'wildcard origin alone', spec: cors({ allowOrigins: ['*'] }) },
  { name: 'wildcard origin with others', spec: cors({ allowOrigins: ['*', 'https://xpto.com'] }), wantErrors: ["AllowOrigins cannot contain '*' alongside other origins"] },
  { name: 'wildcard method with others', spec: cors({ allowMethods: ['GET', '*', 'POST'] }), wantErrors: ["AllowMethods cannot contain '*' alongside other methods"] },
  { name: 'valid methods', spec: cors({ allowMethods: ['GET', 'OPTIONS', 'POST'] }) },
];

describe('Gateway API HTTPRoute CRD (CEL rules)', { skip: existsSync(crdFile) ? false : `no ${crdFile}` }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    const crd = parseYaml(readFileSync(crdFile, 'utf8')) as Obj;
    const res = await s.request('POST', crdPath, crd);
    assert.equal(res.status, 201, res.text);
    await eventually(async () => (await s.request('GET', routes)).status === 200);
  });
  after(async () => s.close());

  for (const [i, c] of cases.entries()) {
    it(c.wantErrors ? `refuses: ${c.name}` : `accepts: ${c.name}`, async () => {
      const route = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: `route-${i}` }, spec: c.spec };
      const res = await s.request('POST', routes, route);
      if (!c.wantErrors) {
        assert.equal(res.status, 201, res.text);
        return;
      }
      assert.equal(res.status, 422, res.text);
      for (const want of c.wantErrors) assert.ok(res.body.message.includes(want), `${res.body.message}\n  lacks: ${want}`);
    });
  }
});
