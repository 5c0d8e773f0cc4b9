import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from './pki.js';
import { firstServiceIP } from './service-ip.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'kcm-pki-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('ensurePki', () => {
  it('issues a serving certificate covering the kubernetes names, loopback and the service IP', () => {
    const pki = ensurePki(tempDir(), { ipAddresses: ['10.0.0.1'] });
    assert.deepEqual(pki.created, ['ca', 'serving', 'admin-token']);
    const cert = new X509Certificate(pki.serving.certPem);
    for (const n of ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']) {
      assert.equal(cert.checkHost(n, { subject: 'never' }), n);
    }
    for (const ip of ['127.0.0.1', '::1', '10.0.0.1']) assert.ok(cert.checkIP(ip), ip);
    assert.ok(cert.verify(new X509Certificate(pki.ca.certPem).publicKey));
    assert.equal(Buffer.from(pki.adminToken, 'base64url').length, 32);
  });

  it('reuses everything when nothing changed', () => {
    const dir = tempDir();
    const a = ensurePki(dir, { ipAddresses: ['10.0.0.1'] });
    const b = ensurePki(dir, { ipAddresses: ['10.0.0.1'] });
    assert.deepEqual(b.created, []);
    assert.equal(b.serving.certPem, a.serving.certPem);
    assert.equal(b.adminToken, a.adminToken);
  });

  it('re-issues only the serving certificate when the wanted addresses change', () => {
    const dir = tempDir();
    const a = ensurePki(dir, { ipAddresses: ['10.0.0.1'] });
    const b = ensurePki(dir, { ipAddresses: ['10.96.0.1', '192.168.1.5'] });
    assert.deepEqual(b.created, ['serving']);
    assert.equal(b.ca.certPem, a.ca.certPem);
    assert.ok(new X509Certificate(b.serving.certPem).checkIP('192.168.1.5'));
    assert.equal(readFileSync(join(dir, 'apiserver.crt'), 'utf8'), b.serving.certPem);
  });

  it('re-issues the serving certificate when it expires within 30 days', () => {
    const dir = tempDir();
    ensurePki(dir);
    const later = Date.now() + 340 * 86400_000;
    const b = ensurePki(dir, { now: later });
    assert.deepEqual(b.created, ['serving']);
    assert.ok(Date.parse(new X509Certificate(b.serving.certPem).validTo) > later + 300 * 86400_000);
  });
});

describe('firstServiceIP', () => {
  it('is the first address after the network address', () => {
    assert.equal(firstServiceIP('10.0.0.0/24'), '10.0.0.1');
    assert.equal(firstServiceIP('10.96.0.0/12'), '10.96.0.1');
    assert.equal(firstServiceIP('10.96.7.9/12'), '10.96.0.1');
    assert.equal(firstServiceIP('fd00:10:96::/112'), 'fd00:10:96::1');
  });

  it('rejects malformed ranges', () => {
    assert.throws(() => firstServiceIP('10.0.0.0'), /invalid CIDR/);
    assert.throws(() => firstServiceIP('10.0.0.0/33'), /invalid CIDR/);
    assert.throws(() => firstServiceIP('10.0.0.0/32'), /too small/);
  });
});
