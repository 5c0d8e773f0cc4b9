import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { generateTypes } from '../runtime/crd-types.js';
import { customResourceDefinition } from '../runtime/resource.js';
import { Site, SiteV1beta1 } from '../runtime/testdata/site-resource.js';

const root = new URL('../../../', import.meta.url).pathname;
const kcm = join(root, 'bin', 'kcm.js');
const siteModule = join(root, 'dist', 'src', 'runtime', 'testdata', 'site-resource.js');

async function runKcm(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [kcm, ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('kcm crd', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'kcm-crd-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('generate prints the CRDs of every resource a module exports, versions of one kind combined', async () => {
    const r = await runKcm('crd', 'generate', siteModule);
    assert.equal(r.code, 0, r.stderr);
    const docs = parseAllDocuments(r.stdout);
    const crds = (Array.isArray(docs) ? docs : [docs]).map((d) => d.toJS() as unknown);
    assert.deepEqual(crds, [customResourceDefinition(Site, SiteV1beta1)]);
  });

  it('generate --out writes the file, and types turns it back into TypeScript', async () => {
    const yamlFile = join(dir, 'crds.yaml');
    assert.equal((await runKcm('crd', 'generate', siteModule, '--out', yamlFile)).code, 0);
    const r = await runKcm('crd', 'types', yamlFile, '--version', 'v1');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, generateTypes(customResourceDefinition(Site, SiteV1beta1), { version: 'v1' }));
    const out = join(dir, 'site.ts');
    assert.equal((await runKcm('crd', 'types', yamlFile, '--import', 'my-kcm/runtime', '--out', out)).code, 0);
    assert.match(readFileSync(out, 'utf8'), /import \{ defineKind \} from 'my-kcm\/runtime';/);
  });

  it('answers bad input with one line and exit code 1', async () => {
    writeFileSync(join(dir, 'empty.mjs'), 'export const x = 1;\n');
    writeFileSync(join(dir, 'bad.yaml'), 'kind: [unclosed\n');
    writeFileSync(join(dir, 'none.yaml'), 'apiVersion: v1\nkind: ConfigMap\n');
    const cases: Array<[string[], RegExp]> = [
      [['crd', 'generate', 'resources.ts'], /^kcm crd: resources\.ts: Node\.js 20 cannot import TypeScript; compile it \(tsc\) and pass the \.js module\n$/],
      [['crd', 'generate', join(dir, 'missing.js')], /^kcm crd: cannot load .*missing\.js: /],
      [['crd', 'generate', join(dir, 'empty.mjs')], /^kcm crd: .*empty\.mjs exports no resource definitions/],
      [['crd', 'types', join(dir, 'bad.yaml')], /^kcm crd: .*bad\.yaml: /],
      [['crd', 'types', join(dir, 'none.yaml')], /^kcm crd: .*none\.yaml holds no CustomResourceDefinition\n$/],
      [['crd', 'types', join(dir, 'nope.yaml')], /^kcm crd: cannot read .*nope\.yaml: /],
      [['crd', 'frob'], /^kcm crd: unknown subcommand "frob"/],
      [['crd'], /^kcm crd: missing subcommand/],
      [['crd', 'generate'], /^kcm crd: generate needs a module/],
    ];
    for (const [args, re] of cases) {
      const r = await runKcm(...args);
      assert.equal(r.code, 1, args.join(' '));
      assert.match(r.stderr, re, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line for ${args.join(' ')}: ${r.stderr}`);
    }
  });
});
