import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { base32Std, portProtoHash, servicePortEndpointChain, servicePortPolicyClusterChain, serviceExternalChain, servicePortPolicyLocalChain, serviceFirewallChain } from './chains.js';
import { probability } from './iptables.js';

/** An independent base32 (RFC 4648) by bit strings, to check the encoder. */
function base32ByBits(bytes: Uint8Array): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const b of bytes) bits += b.toString(2).padStart(8, '0');
  while (bits.length % 5 !== 0) bits += '0';
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5), 2)];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

describe('kube-proxy chain names', () => {
  it('base32 matches RFC 4648 test vectors and an independent encoder', () => {
    const vectors: Array<[string, string]> = [
      ['', ''],
      ['f', 'MY======'],
      ['fo', 'MZXQ===='],
      ['foo', 'MZXW6==='],
      ['foob', 'MZXW6YQ='],
      ['fooba', 'MZXW6YTB'],
      ['foobar', 'MZXW6YTBOI======'],
    ];
    for (const [input, want] of vectors) assert.equal(base32Std(Buffer.from(input)), want);
    for (const s of ['ns1/svc1:p80tcp', 'x', 'a longer string of bytes']) {
      const sum = createHash('sha256').update(s).digest();
      assert.equal(base32Std(sum), base32ByBits(sum));
    }
  });

  it('matches the literal chain names of kube-proxy’s proxier_test.go', () => {
    // pkg/proxy/iptables/proxier_test.go: ns1/svc1:p80 (tcp) and its endpoint 10.180.0.1:80.
    assert.equal(servicePortPolicyClusterChain('ns1/svc1:p80', 'tcp'), 'KUBE-SVC-XPGD46QRK7WJZT7O');
    assert.equal(servicePortPolicyLocalChain('ns1/svc1:p80', 'tcp'), 'KUBE-SVL-XPGD46QRK7WJZT7O');
    assert.equal(serviceExternalChain('ns1/svc1:p80', 'tcp'), 'KUBE-EXT-XPGD46QRK7WJZT7O');
    assert.equal(serviceFirewallChain('ns1/svc1:p80', 'tcp'), 'KUBE-FW-XPGD46QRK7WJZT7O');
    assert.equal(servicePortEndpointChain('ns1/svc1:p80', 'tcp', '10.180.0.1:80'), 'KUBE-SEP-SXIVWICOYRO3J4NJ');
    // ... and the NodePort service ns2/svc2:p80 of the same tests (KUBE-NODEPORTS ... -j KUBE-EXT-GNZBNJ2PO5MGZ6GT).
    assert.equal(serviceExternalChain('ns2/svc2:p80', 'tcp'), 'KUBE-EXT-GNZBNJ2PO5MGZ6GT');
  });

  it('hashes servicePortName + protocol (+ endpoint), first 16 base32 characters', () => {
    const h = base32ByBits(createHash('sha256').update('ns2/svc2:p80' + 'udp').digest()).slice(0, 16);
    assert.equal(portProtoHash('ns2/svc2:p80', 'udp'), h);
    assert.notEqual(portProtoHash('ns2/svc2:p80', 'udp'), portProtoHash('ns2/svc2:p80', 'tcp'));
    const e = base32ByBits(createHash('sha256').update('ns2/svc2:p80' + 'tcp' + '10.0.0.1:8080').digest()).slice(0, 16);
    assert.equal(servicePortEndpointChain('ns2/svc2:p80', 'tcp', '10.0.0.1:8080'), 'KUBE-SEP-' + e);
    assert.ok(servicePortEndpointChain('ns2/svc2:p80', 'tcp', '10.0.0.1:8080').length <= 28);
  });

  it('formats probabilities as %0.10f', () => {
    assert.equal(probability(3), '0.3333333333');
    assert.equal(probability(2), '0.5000000000');
    assert.equal(probability(7), '0.1428571429');
  });
});
