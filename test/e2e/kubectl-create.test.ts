/**
 * kubectl's typed commands (`kubectl create <kind>`, `run`, `expose`) against
 * `kcm apiserver`. kubectl 1.32 sends most of these bodies as
 * `application/vnd.kubernetes.protobuf`; each object stored from protobuf must
 * equal the same object sent as JSON (`--dry-run=client -o json` piped into
 * `kubectl create -f -`), up to what the server assigns (uid, times, IPs,
 * ports) and to the empty values (`{}`, null) that Go's JSON writes and a
 * protobuf body leaves out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, type KcmProcess } from './harness.js';

let kcm: KcmProcess;
const pb = 'via-protobuf';
const js = 'via-json';

before(async () => {
  kcm = await startApiServerProcess();
  for (const ns of [pb, js]) {
    await kcm.kubectlOk(['create', 'namespace', ns]);
    // No serviceaccount controller runs; pods are refused without the default account.
    await kcm.kubectlOk(['create', 'serviceaccount', 'default', '-n', ns]);
  }
});
after(async () => {
  await kcm?.stop();
});

/** Drops what the server assigns and the empty values Go's JSON writes (`resources: {}`, `creationTimestamp: null`). */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  // ServiceAccount admission names the token volume with a random suffix.
  if (typeof v === 'string' && /^kube-api-access-[a-z0-9]{5}$/.test(v)) return 'kube-api-access-*';
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'namespace', 'generation', 'clusterIP', 'clusterIPs', 'nodePort'].includes(k)) continue;
    const n = normalize(x);
    if (n === null || n === undefined) continue;
    if (typeof n === 'object' && !Array.isArray(n) && Object.keys(n).length === 0) continue;
    out[k] = n;
  }
  return out;
}

/** The object as JSON, its own uid replaced by `UID` wherever it appears (a Job's selector and labels carry it). */
async function getJson(args: string[]): Promise<Record<string, any>> {
  const text = await kcm.kubectlOk(['get', ...args, '-o', 'json']);
  const uid = (JSON.parse(text) as { metadata?: { uid?: string } }).metadata?.uid;
  return JSON.parse(uid ? text.split(uid).join('UID') : text) as Record<string, any>;
}

interface Case {
  /** The command without namespace flags; `NAME` is replaced for cluster-scoped kinds. */
  args: string[];
  /** What to `kubectl get` afterwards. */
  get: string[];
  clusterScoped?: boolean;
  todo?: string;
}

const cases: Case[] = [
  { args: ['create', 'configmap', 'c', '--from-literal=k=v', '--from-literal=empty='], get: ['configmap', 'c'] },
  { args: ['create', 'secret', 'generic', 's', '--from-literal=p=q'], get: ['secret', 's'] },
  { args: ['create', 'deployment', 'web', '--image=nginx', '--replicas=3', '--port=8080'], get: ['deployment', 'web'] },
  { args: ['create', 'deployment', 'zero', '--image=nginx', '--replicas=0'], get: ['deployment', 'zero'] },
  { args: ['create', 'job', 'j', '--image=busybox', '--', 'sleep', '1'], get: ['job', 'j'] },
  { args: ['create', 'cronjob', 'cj', '--image=busybox', '--schedule=*/1 * * * *', '--', 'sleep', '1'], get: ['cronjob', 'cj'] },
  { args: ['expose', 'deployment', 'web', '--port=80', '--target-port=8080'], get: ['service', 'web'] },
  { args: ['run', 'p', '--image=nginx', '--labels=app=p', '--env=X=1', '--port=80'], get: ['pod', 'p'] },
  { args: ['create', 'service', 'clusterip', 'cs', '--tcp=5678:8080'], get: ['service', 'cs'] },
  { args: ['create', 'service', 'nodeport', 'np', '--tcp=80:8080'], get: ['service', 'np'] },
  { args: ['create', 'serviceaccount', 'sa'], get: ['serviceaccount', 'sa'] },
  { args: ['create', 'role', 'r', '--verb=get,list', '--resource=pods,deployments.apps'], get: ['role', 'r'] },
  { args: ['create', 'rolebinding', 'rb', '--role=r', '--user=u', '--serviceaccount=x:y'], get: ['rolebinding', 'rb'] },
  { args: ['create', 'quota', 'q', '--hard=pods=2,requests.cpu=1.5'], get: ['resourcequota', 'q'] },
  { args: ['create', 'pdb', 'pdb', '--selector=app=web', '--max-unavailable=0'], get: ['pdb', 'pdb'] },
  { args: ['create', 'ingress', 'ing', '--rule=foo.com/bar=svc1:8080', '--rule=x.com/*=svc2:http'], get: ['ingress', 'ing'] },
  { args: ['create', 'clusterrole', 'NAME', '--verb=get', '--resource=pods'], get: ['clusterrole', 'NAME'], clusterScoped: true },
  { args: ['create', 'clusterrolebinding', 'NAME', '--clusterrole=view', '--group=g'], get: ['clusterrolebinding', 'NAME'], clusterScoped: true },
  { args: ['create', 'priorityclass', 'NAME', '--value=-5', '--description=low'], get: ['priorityclass', 'NAME'], clusterScoped: true },
];

describe('kubectl typed create commands (protobuf bodies)', () => {
  let n = 0;
  for (const c of cases) {
    it(`stores "kubectl ${c.args.join(' ')}" as the same object as its JSON form`, { todo: c.todo }, async () => {
      const id = ++n;
      const sub = (args: string[], which: string) => args.map((a) => (a === 'NAME' ? `k-${id}-${which}` : a));
      // Flags go first: arguments after `--` are the container's command.
      const pbArgs = c.clusterScoped ? sub(c.args, 'pb') : ['-n', pb, ...c.args];
      const jsArgs = c.clusterScoped ? sub(c.args, 'js') : ['-n', js, ...c.args];
      const r = await kcm.kubectl(pbArgs);
      assert.equal(r.code, 0, `kubectl ${pbArgs.join(' ')}: ${r.stderr}`);
      const manifest = await kcm.kubectlOk(['--dry-run=client', '-o', 'json', ...jsArgs]);
      await kcm.kubectlOk(['create', '--validate=false', '-f', '-', ...(c.clusterScoped ? [] : ['-n', js])], { input: manifest });
      const got = await getJson(c.clusterScoped ? sub(c.get, 'pb') : [...c.get, '-n', pb]);
      const want = await getJson(c.clusterScoped ? sub(c.get, 'js') : [...c.get, '-n', js]);
      if (c.clusterScoped) {
        delete got.metadata.name;
        delete want.metadata.name;
      }
      assert.deepEqual(normalize(got), normalize(want));
    });
  }

  it('answers a protobuf body of a kind without schema with 400, not 415', async () => {
    const res = await fetchRaw('/api/v1/namespaces/via-protobuf/configmaps', Buffer.from('k8s\u0000garbage'));
    assert.equal(res.status, 400);
  });
});

/** POSTs raw bytes as application/vnd.kubernetes.protobuf with the admin token. */
async function fetchRaw(path: string, body: Buffer): Promise<{ status: number }> {
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({ connect: { ca: kcm.caPem } });
  try {
    const res = await request(`${kcm.url}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', authorization: `Bearer ${kcm.adminToken}` },
      dispatcher,
    });
    await res.body.text();
    return { status: res.statusCode };
  } finally {
    await dispatcher.close();
  }
}
