#!/usr/bin/env node
// Test exec credential plugin. Behaviour from env:
//   PLUGIN_MODE: token (default) | cert | fail | wrong-version | no-status
//   PLUGIN_STATE: file counting runs; the token is `token-<run>`
//   PLUGIN_INFO: file receiving KUBERNETES_EXEC_INFO
//   PLUGIN_EXPIRES: expirationTimestamp to report
//   PLUGIN_API_VERSION: apiVersion to answer (default from KUBERNETES_EXEC_INFO)
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

const env = process.env;
let run = 1;
if (env.PLUGIN_STATE) {
  run = existsSync(env.PLUGIN_STATE) ? Number(readFileSync(env.PLUGIN_STATE, 'utf8')) + 1 : 1;
  writeFileSync(env.PLUGIN_STATE, String(run));
}
if (env.PLUGIN_INFO) writeFileSync(env.PLUGIN_INFO, env.KUBERNETES_EXEC_INFO ?? '');
const info = JSON.parse(env.KUBERNETES_EXEC_INFO ?? '{}');
const apiVersion = env.PLUGIN_MODE === 'wrong-version' ? 'client.authentication.k8s.io/v1alpha1' : (env.PLUGIN_API_VERSION ?? info.apiVersion);
const mode = env.PLUGIN_MODE ?? 'token';
if (mode === 'fail') {
  process.stderr.write('plugin says no\n');
  process.exit(3);
}
const status = {};
if (mode === 'token' || mode === 'wrong-version') status.token = `token-${run}`;
if (mode === 'cert') {
  status.clientCertificateData = readFileSync(env.PLUGIN_CERT, 'utf8');
  status.clientKeyData = readFileSync(env.PLUGIN_KEY, 'utf8');
}
if (env.PLUGIN_EXPIRES) status.expirationTimestamp = env.PLUGIN_EXPIRES;
const out = { kind: 'ExecCredential', apiVersion };
if (mode !== 'no-status') out.status = status;
process.stdout.write(JSON.stringify(out));
