import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap, Container } from 'kubernetes-types/core/v1.js';
import { FsError, modeString } from '../shell/fs.js';
import { runToCompletion } from '../shell/index.js';
import { PodVolumes, managedHostsFile, podHostname, podHostnames, podResolvConf } from './fs.js';
import { NODE, b64, pod, source } from './testutil.js';
import { NGINX_INDEX_HTML, imageFilesKey, seedImageFiles } from '../images/index.js';

const T0 = Date.UTC(2026, 10, 26, 18, 0, 0);

test('pod host names: spec.hostname, pod name cut to 63, subdomain FQDN, setHostnameAsFQDN', () => {
  assert.equal(podHostname(pod()), 'web-0');
  assert.equal(podHostname(pod({ hostname: 'h1' })), 'h1');
  const long = 'a'.repeat(62) + '-bcd';
  assert.equal(podHostname(pod({}, { name: long })), 'a'.repeat(62));
  assert.deepEqual(podHostnames(pod({ hostname: 'h1', subdomain: 'sub' })), { hostname: 'h1', domain: 'sub.ns1.svc.cluster.local', kernelHostname: 'h1' });
  assert.equal(podHostnames(pod({ hostname: 'h1', subdomain: 'sub', setHostnameAsFQDN: true })).kernelHostname, 'h1.sub.ns1.svc.cluster.local');
  assert.match(podHostnames(pod({ hostname: 'H_1' })).error!, /^pod Hostname "H_1" is not a valid DNS label/);
});

test('managed /etc/hosts as kubelet writes it', () => {
  assert.equal(
    managedHostsFile(pod(), ['10.244.1.7']),
    '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.244.1.7\tweb-0\n',
  );
  const p = pod({ hostname: 'h1', subdomain: 'sub', hostAliases: [{ ip: '1.2.3.4', hostnames: ['foo.local', 'bar.local'] }, { ip: '::5', hostnames: ['v6'] }] });
  assert.equal(
    managedHostsFile(p, ['10.244.1.7', 'fd00::7']).split('fe00::2\tip6-allrouters\n')[1],
    '10.244.1.7\th1.sub.ns1.svc.cluster.local\th1\nfd00::7\th1.sub.ns1.svc.cluster.local\th1\n\n# Entries added by HostAliases.\n1.2.3.4\tfoo.local\tbar.local\n::5\tv6\n',
  );
  assert.ok(managedHostsFile(pod({ hostNetwork: true }), ['172.18.0.2'], 'cluster.local', NODE).startsWith('# Kubernetes-managed hosts file (host network).\n'));
});

function cmOf(data: Record<string, string>): ConfigMap {
  return { metadata: { namespace: 'ns1', name: 'cfg' }, data };
}

test('container fs: standard files, hostname, /etc/hosts over the image, AtomicWriter layout read-only', () => {
  const p = pod({ volumes: [{ name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'a', path: 'dir/a.conf', mode: 0o400 }, { key: 'b', path: 'b' }] } }] });
  const vols = new PodVolumes(p, source({ configMaps: [cmOf({ a: 'x=1\n', b: 'y' })] }), NODE, T0);
  assert.deepEqual(vols.errors(), []);
  const c: Container = { name: 'app', volumeMounts: [{ name: 'cfg', mountPath: '/etc/config' }] };
  const r = vols.containerFs(c, {}, { now: T0, seed: (fs) => fs.writeFile('/etc/hosts', 'image hosts\n') });
  assert.ok(r.fs);
  const fs = r.fs;
  assert.equal(fs.readText('/etc/hostname'), 'web-0\n');
  assert.match(fs.readText('/etc/hosts'), /^# Kubernetes-managed hosts file\.\n[^]*10\.244\.1\.7\tweb-0\n$/);
  assert.equal(fs.readText('/etc/config/dir/a.conf'), 'x=1\n');
  assert.equal(fs.readText('/etc/config/b'), 'y');
  assert.deepEqual(fs.readdir('/etc/config'), ['..2026_11_26_18_00_00.000000000', '..data', 'b', 'dir']);
  assert.equal(fs.readlink('/etc/config/b'), '..data/b');
  assert.equal(modeString(fs.stat('/etc/config/dir/a.conf')!), '-r--------');
  assert.equal(modeString(fs.stat('/etc/config/b')!), '-rw-r--r--');
  assert.throws(() => fs.writeFile('/etc/config/new', 'z'), (e: unknown) => e instanceof FsError && e.code === 'EROFS');
  const ls = runToCompletion({ argv: ['cat', '/etc/config/dir/a.conf'], fs, clock: T0 }, 1000);
  assert.equal(ls.stdout, 'x=1\n');
});

test('emptyDir is shared between containers; readOnly mounts; mode 0777', () => {
  const p = pod({ volumes: [{ name: 'shared', emptyDir: {} }] });
  const vols = new PodVolumes(p, source({}), NODE, T0);
  const a = vols.containerFs({ name: 'a', volumeMounts: [{ name: 'shared', mountPath: '/data' }] }, {}, { now: T0 }).fs!;
  const b = vols.containerFs({ name: 'b', volumeMounts: [{ name: 'shared', mountPath: '/in', readOnly: true }] }, {}, { now: T0 }).fs!;
  a.writeFile('/data/msg', 'hello');
  assert.equal(b.readText('/in/msg'), 'hello');
  assert.throws(() => b.writeFile('/in/x', 'no'), (e: unknown) => e instanceof FsError && e.code === 'EROFS');
  assert.equal(modeString(a.stat('/data')!), 'drwxrwxrwx');
});

test('containers of one image share its files until they change them; volumes stay shared by identity', () => {
  const p = pod({ volumes: [{ name: 'shared', emptyDir: {} }, { name: 'cfg', configMap: { name: 'cfg' } }] });
  const vols = new PodVolumes(p, source({ configMaps: [cmOf({ a: 'x=1\n' })] }), NODE, T0);
  const image = (img: string) => ({ seed: (fs: Parameters<typeof seedImageFiles>[1]) => void seedImageFiles(img, fs), seedKey: imageFilesKey(img) });
  const mounts = [{ name: 'shared', mountPath: '/usr/share/nginx/html/shared' }, { name: 'cfg', mountPath: '/etc/nginx/conf.d' }];
  const a = vols.containerFs({ name: 'a', volumeMounts: mounts }, {}, { now: T0, ...image('nginx:1.25') }).fs!;
  const b = vols.containerFs({ name: 'b', volumeMounts: mounts }, {}, { now: T0 + 1000, ...image('nginx') }).fs!;
  const sh = (fs: typeof a, cmd: string) => runToCompletion({ argv: ['sh', '-c', cmd], fs, clock: T0 + 2000 }, 1000);
  assert.equal(sh(a, 'echo mine > /usr/share/nginx/html/index.html && rm /usr/share/nginx/html/50x.html && chmod 700 /usr/sbin/nginx && mkdir /var/cache/nginx/x && echo s > /usr/share/nginx/html/shared/f').exitCode, 0);
  assert.equal(a.readText('/usr/share/nginx/html/index.html'), 'mine\n');
  for (const fs of [b, vols.containerFs({ name: 'c', volumeMounts: mounts }, {}, { now: T0 + 3000, ...image('nginx') }).fs!]) {
    assert.equal(fs.readText('/usr/share/nginx/html/index.html'), NGINX_INDEX_HTML);
    assert.equal(fs.exists('/usr/share/nginx/html/50x.html'), true);
    assert.equal(modeString(fs.stat('/usr/sbin/nginx')!), '-rwxr-xr-x');
    assert.equal(fs.exists('/var/cache/nginx/x'), false);
    assert.equal(fs.readText('/usr/share/nginx/html/shared/f'), 's\n', 'the emptyDir is one directory for all containers');
    assert.equal(fs.mountedAt('/etc/nginx/conf.d'), vols.volumeDir('cfg'));
    assert.equal(fs.readText('/etc/nginx/conf.d/a'), 'x=1\n');
  }
  assert.equal(b.stat('/usr/share/nginx/html/index.html')!.mtime, T0 + 1000);
  assert.equal(b.readText('/etc/hostname'), 'web-0\n');
});

test('subPath and subPathExpr: directories created in the volume, files bound, errors', () => {
  const p = pod({
    volumes: [
      { name: 'work', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'cfg' } },
    ],
  });
  const vols = new PodVolumes(p, source({ configMaps: [cmOf({ 'nginx.conf': 'worker 1;\n' })] }), NODE, T0);
  const c: Container = {
    name: 'app',
    volumeMounts: [
      { name: 'work', mountPath: '/logs', subPathExpr: '$(POD_NAME)/logs' },
      { name: 'cfg', mountPath: '/etc/nginx/nginx.conf', subPath: 'nginx.conf' },
    ],
  };
  const fs = vols.containerFs(c, { POD_NAME: 'web-0' }, { now: T0 }).fs!;
  fs.writeFile('/logs/out.log', 'line\n');
  const other = vols.containerFs({ name: 'b', volumeMounts: [{ name: 'work', mountPath: '/w' }] }, {}, { now: T0 }).fs!;
  assert.equal(other.readText('/w/web-0/logs/out.log'), 'line\n');
  assert.equal(fs.readText('/etc/nginx/nginx.conf'), 'worker 1;\n');
  assert.equal(fs.stat('/etc/nginx/nginx.conf', '/', false)!.type, 'file');

  // A subPath file does not follow later updates of the volume (as in Kubernetes).
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ 'nginx.conf': 'worker 2;\n' })] }), T0 + 60_000), true);
  assert.equal(fs.readText('/etc/nginx/nginx.conf'), 'worker 1;\n');

  const err = (m: Container['volumeMounts'], env: Record<string, string> = {}) => vols.containerFs({ name: 'app', volumeMounts: m }, env, { now: T0 }).error;
  assert.equal(err([{ name: 'work', mountPath: '/x', subPathExpr: '$(A)/$(B)' }], { B: '' }), 'missing value for A, B');
  assert.equal(err([{ name: 'work', mountPath: '/x', subPath: '/abs' }]), 'error SubPath `/abs` must not be an absolute path');
  assert.equal(err([{ name: 'work', mountPath: '/x', subPath: 'a/../b' }]), "unable to provision SubPath `a/../b`: must not contain '..'");
  assert.equal(err([{ name: 'nope', mountPath: '/x' }]), 'cannot find volume "nope" to mount into container "app"');
});

test('nested mounts: parents first whatever the order in volumeMounts', () => {
  const p = pod({ volumes: [{ name: 'outer', emptyDir: {} }, { name: 'inner', emptyDir: {} }] });
  const vols = new PodVolumes(p, source({}), NODE, T0);
  const fs = vols.containerFs(
    { name: 'app', volumeMounts: [{ name: 'inner', mountPath: '/data/inner' }, { name: 'outer', mountPath: '/data' }] },
    {},
    { now: T0 },
  ).fs!;
  fs.writeFile('/data/inner/f', '1');
  assert.equal(vols.volumeDir('inner')!.entries.has('f'), true);
  assert.equal(vols.volumeDir('outer')!.entries.has('inner'), true);
});

test('refresh: configMap update swaps ..data; unchanged content is not rewritten; downwardAPI follows the pod', () => {
  const p = pod(
    {
      volumes: [
        { name: 'cfg', configMap: { name: 'cfg' } },
        { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      ],
    },
    { labels: { a: '1' } },
  );
  const vols = new PodVolumes(p, source({ configMaps: [cmOf({ k: 'v1' })] }), NODE, T0);
  const fs = vols.containerFs(
    { name: 'app', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }, { name: 'info', mountPath: '/info' }] },
    {},
    { now: T0 },
  ).fs!;
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ k: 'v1' })] }), T0 + 1000), false);
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ k: 'v2', n: 'new' })] }), T0 + 2000), true);
  assert.equal(fs.readText('/cfg/k'), 'v2');
  assert.equal(fs.readText('/cfg/n'), 'new');
  assert.equal(fs.readlink('/cfg/..data'), '..2026_11_26_18_00_02.000000000');
  assert.deepEqual(fs.readdir('/cfg'), ['..2026_11_26_18_00_02.000000000', '..data', 'k', 'n']);
  const p2 = { ...p, metadata: { ...p.metadata, labels: { a: '1', b: '2' } } };
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ k: 'v2', n: 'new' })] }), T0 + 3000, p2), true);
  assert.equal(fs.readText('/info/labels'), 'a="1"\nb="2"');
});

test('a missing configMap: FailedMount errors, then the volume appears once it exists; refresh errors keep content', () => {
  const p = pod({ volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }, { name: 's', secret: { secretName: 'sec' } }] });
  const sec = { metadata: { namespace: 'ns1', name: 'sec' }, data: { pw: b64('pw1') } };
  const vols = new PodVolumes(p, source({ secrets: [sec] }), NODE, T0);
  assert.deepEqual(vols.errors(), ['MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found']);
  assert.equal(vols.ready(), false);
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ k: 'v' })], secrets: [sec] }), T0 + 1000), true);
  assert.deepEqual(vols.errors(), []);
  const fs = vols.containerFs({ name: 'app', volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }, { name: 's', mountPath: '/s' }] }, {}, { now: T0 }).fs!;
  assert.equal(fs.readText('/cfg/k'), 'v');
  assert.equal(fs.readText('/s/pw'), 'pw1');
  // The secret is deleted: kubelet keeps the files and reports the error.
  assert.equal(vols.refresh(source({ configMaps: [cmOf({ k: 'v' })] }), T0 + 2000), false);
  assert.deepEqual(vols.errors(), ['MountVolume.SetUp failed for volume "s" : secret "sec" not found']);
  assert.equal(fs.readText('/s/pw'), 'pw1');
});

test('projected token is cached until 80% of its lifetime', () => {
  let n = 0;
  const src = source({ token: () => `tok-${++n}` });
  const p = pod({ volumes: [{ name: 'kube-api-access-abcde', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] } }] });
  const vols = new PodVolumes(p, src, NODE, T0);
  const fs = vols.containerFs({ name: 'app', volumeMounts: [{ name: 'kube-api-access-abcde', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }, {}, { now: T0 }).fs!;
  assert.equal(fs.readText('/var/run/secrets/kubernetes.io/serviceaccount/token'), 'tok-1');
  assert.equal(vols.refresh(src, T0 + 60_000), false);
  assert.equal(vols.refresh(src, T0 + 2880_000 + 1), true);
  assert.equal(fs.readText('/var/run/secrets/kubernetes.io/serviceaccount/token'), 'tok-2');
});

test('a container mounting /etc/hosts keeps the volume file; setHostnameAsFQDN hostname', () => {
  const p = pod({ hostname: 'h', subdomain: 's', setHostnameAsFQDN: true, volumes: [{ name: 'hosts', configMap: { name: 'cfg' } }] });
  const vols = new PodVolumes(p, source({ configMaps: [cmOf({ hosts: 'custom\n' })] }), NODE, T0);
  const fs = vols.containerFs({ name: 'app', volumeMounts: [{ name: 'hosts', mountPath: '/etc/hosts', subPath: 'hosts' }] }, {}, { now: T0 }).fs!;
  assert.equal(fs.readText('/etc/hosts'), 'custom\n');
  assert.equal(fs.readText('/etc/hostname'), 'h.s.ns1.svc.cluster.local\n');
});

test('/etc/resolv.conf by dnsPolicy and dnsConfig', () => {
  assert.equal(podResolvConf(pod(), {}), 'nameserver 10.96.0.10\nsearch ns1.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n');
  const host = { nameservers: ['172.18.0.1'], searches: ['corp.example'], options: ['edns0'] };
  assert.equal(podResolvConf(pod({ dnsPolicy: 'Default' }), { hostDNS: host }), 'nameserver 172.18.0.1\nsearch corp.example\noptions edns0\n');
  assert.equal(podResolvConf(pod({ hostNetwork: true }), { hostDNS: host }), 'nameserver 172.18.0.1\nsearch corp.example\noptions edns0\n');
  assert.equal(
    podResolvConf(pod({ hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' }), { hostDNS: host, clusterDNS: ['10.0.0.10'] }),
    'nameserver 10.0.0.10\nsearch ns1.svc.cluster.local svc.cluster.local cluster.local corp.example\noptions ndots:5\n',
  );
  assert.equal(
    podResolvConf(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1'], searches: ['a.b'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }), {}),
    'nameserver 1.1.1.1\nsearch a.b\noptions ndots:2 edns0\n',
  );
  assert.equal(podResolvConf(pod({ dnsConfig: { options: [{ name: 'ndots', value: '1' }] } }), {}).split('\n')[2], 'options ndots:1');
  const vols = new PodVolumes(pod(), source({}), NODE, T0);
  assert.equal(vols.containerFs({ name: 'app' }, {}, { now: T0 }).fs!.readText('/etc/resolv.conf'), podResolvConf(pod(), {}));
});
