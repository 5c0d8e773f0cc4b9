/**
 * An API server for tests, in the test's own process: kcm's embedded
 * Kubernetes API server on loopback with memory storage, no binaries, no
 * etcd. envtest's job, without downloads.
 *
 *   const env = await startTestEnv({ crds: [widgetCrd] });
 *   const mgr = newManager({ name: 'test', restConfig: env.restConfig });
 *   ...
 *   await env.stop();
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { createApiHandler } from '../apiserver/handler.js';
import { newMemoryStorage } from '../apiserver/storage/memory.js';
import { newKubeClient, type KubeClient } from '../client/client.js';
import { isAlreadyExists } from '../client/errors.js';
import { newRestConfig, type RestConfig } from '../client/rest-config.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newLogger } from '../util/log/logger.js';

export interface TestEnvOptions {
  /** CustomResourceDefinitions to install; startTestEnv returns once each is Established. */
  crds?: CustomResourceDefinition[];
  /** How long to wait for CRDs (default 10 s). */
  crdTimeoutMs?: number;
}

export interface TestEnv {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Admin access (system:masters) to the test server. */
  readonly restConfig: RestConfig;
  /** A kubeconfig (YAML) for the test server, for kubectl or other tools. */
  readonly kubeconfig: string;
  /** An admin client; closed by stop(). */
  readonly client: KubeClient;
  /** Installs CRDs and waits until they are Established. */
  installCRDs(crds: CustomResourceDefinition[]): Promise<void>;
  /** Ends every watch, closes the server and drops all state. */
  stop(): Promise<void>;
}

const admin = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function kubeconfigYaml(url: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: kcm-test',
    '  cluster:',
    `    server: ${url}`,
    'users:',
    '- name: admin',
    '  user: {}',
    'contexts:',
    '- name: kcm-test',
    '  context:',
    '    cluster: kcm-test',
    '    user: admin',
    'current-context: kcm-test',
    '',
  ].join('\n');
}

async function waitEstablished(client: KubeClient, names: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const crds = client.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions);
  for (const name of names) {
    for (;;) {
      const crd = await crds.get(name);
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CustomResourceDefinition ${name} not Established within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

export async function startTestEnv(opts: TestEnvOptions = {}): Promise<TestEnv> {
  const storage = newMemoryStorage();
  const handler = await createApiHandler({ storage, logger: newLogger('test-apiserver') });
  const server = http.createServer((req, res) => handler.handle(req, res, admin));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const restConfig = newRestConfig({ host: url, qps: -1 });
  const client = newKubeClient(restConfig);
  const timeout = opts.crdTimeoutMs ?? 10_000;
  const installCRDs = async (crds: CustomResourceDefinition[]) => {
    const ri = client.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions);
    for (const crd of crds) {
      try {
        await ri.create({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', ...crd } as CustomResourceDefinition & KubeObject);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
    await waitEstablished(
      client,
      crds.map((c) => c.metadata?.name ?? ''),
      timeout,
    );
  };
  let stopped = false;
  const env: TestEnv = {
    url,
    restConfig,
    kubeconfig: kubeconfigYaml(url),
    client,
    installCRDs,
    async stop() {
      if (stopped) return;
      stopped = true;
      await client.close();
      await handler.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await storage.close();
    },
  };
  try {
    if (opts.crds?.length) await installCRDs(opts.crds);
  } catch (err) {
    await env.stop();
    throw err;
  }
  return env;
}
