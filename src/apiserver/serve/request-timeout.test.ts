import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLongRunning, timeoutBody } from './request-timeout.js';

describe('request timeout', () => {
  it("exempts what kube-apiserver's BasicLongRunningRequestCheck exempts", () => {
    for (const [method, url] of [
      ['GET', '/api/v1/pods?watch=1'],
      ['GET', '/api/v1/watch/namespaces/default/pods'],
      ['GET', '/apis/apps/v1/deployments?watch=true&resourceVersion=5'],
      ['GET', '/api/v1/namespaces/default/pods/p/log?follow=true'],
      ['POST', '/api/v1/namespaces/default/pods/p/exec?command=ls'],
      ['POST', '/api/v1/namespaces/default/pods/p/attach'],
      ['POST', '/api/v1/namespaces/default/pods/p/portforward'],
      ['GET', '/api/v1/namespaces/default/services/s:80/proxy/x'],
      ['GET', '/debug/pprof/profile'],
    ] as const) {
      assert.equal(isLongRunning(method, url), true, `${method} ${url}`);
    }
    for (const [method, url] of [
      ['GET', '/api/v1/pods'],
      ['GET', '/api/v1/pods?watch=0'],
      ['POST', '/api/v1/namespaces/default/configmaps'],
      ['GET', '/apis/apps/v1/namespaces/default/deployments/d/status'],
      ['GET', '/healthz'],
      ['GET', '/openapi/v2'],
    ] as const) {
      assert.equal(isLongRunning(method, url), false, `${method} ${url}`);
    }
  });

  it('writes the bare Status kube-apiserver 1.20 writes, with the timeout as a Go duration', () => {
    assert.equal(timeoutBody(60_000), '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within 1m0s","reason":"Timeout","details":{},"code":504}\n');
    assert.equal(timeoutBody(1_500), '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within 1.5s","reason":"Timeout","details":{},"code":504}\n');
  });
});
