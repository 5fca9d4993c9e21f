// Older kubectl against kite: 1.27 and 1.28 fetch /openapi/v2 (protobuf) before they apply or edit,
// validate and compute apply's strategic merge patch from it; 1.30 and 1.33 read v3 and still v2
// for the patch. Each version runs the seed's pod through apply (create, then a changed apply:
// the client-side patch path), get, describe, edit and delete. The versioned binaries sit beside
// `kubectl` on PATH (kubectl.1.27 etc.); a version that is not installed is skipped.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, examplesDir, startServer, tempDir, type CommandResult, type KiteServer } from './harness.js';

const VERSIONS = ['1.27', '1.28', '1.30', '1.33'];

/** The directory of the `kubectl` on PATH, links resolved. */
function kubectlDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'kubectl');
    if (dir && existsSync(candidate)) return dirname(realpathSync(candidate));
  }
  return undefined;
}

const binDir = kubectlDir();
const podYaml = readFileSync(join(examplesDir, 'web-pod.yaml'), 'utf8');
let server: KiteServer;
let work: string;

before(async () => {
  server = await startServer();
  work = tempDir('kubectl-versions');
  // The editor kubectl edit runs on the object's YAML: relabel the pod.
  writeFileSync(join(work, 'editor.sh'), `#!/bin/sh\nsed -i 's/app: changed/app: edited/' "$1"\n`);
  chmodSync(join(work, 'editor.sh'), 0o755);
});

after(async () => {
  await server.stop();
  removeDir(server.dataDir);
  removeDir(work);
});

for (const version of VERSIONS) {
  const bin = binDir && join(binDir, `kubectl.${version}`);
  void test(`kubectl ${version}: apply, apply a change, get, describe, edit, delete`, { skip: bin && existsSync(bin) ? false : `kubectl.${version} is not installed` }, () => {
    const run = (args: string[], input?: string): CommandResult => {
      const r = spawnSync(bin!, ['--kubeconfig', server.kubeconfig, '--cache-dir', join(work, `cache-${version}`), ...args], {
        input,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, KUBE_EDITOR: join(work, 'editor.sh') },
      });
      return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
    };
    const ok = (args: string[], input?: string): string => {
      const r = run(args, input);
      assert.equal(r.code, 0, `kubectl.${version} ${args.join(' ')}:\n${r.stderr}${r.stdout}`);
      // A warning here would mean kubectl could not use the v2 schemas (e.g. to compute the patch).
      assert.doesNotMatch(r.stderr, /warning|error/i, `kubectl.${version} ${args.join(' ')}`);
      return r.stdout;
    };

    assert.equal(ok(['apply', '-f', '-'], podYaml).trim(), 'pod/web created');
    const changed = podYaml.replace('app: web', 'app: changed').replace('image: nginx:1.22', 'image: nginx:1.23');
    assert.equal(ok(['apply', '-f', '-'], changed).trim(), 'pod/web configured');
    assert.equal(ok(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels.app} {.spec.containers[0].image}']), 'changed nginx:1.23');
    // Applying the same manifest again computes an empty patch.
    assert.equal(ok(['apply', '-f', '-'], changed).trim(), 'pod/web unchanged');

    assert.match(ok(['get', 'pod', 'web']), /^web\s+0\/1\s+Pending\s+0\s+/m);
    const described = ok(['describe', 'pod', 'web']);
    assert.match(described, /^Name:\s+web$/m);
    assert.match(described, /^Labels:\s+app=changed$/m);
    assert.match(described, /^\s+Image:\s+nginx:1\.23$/m);

    assert.equal(ok(['edit', 'pod', 'web']).trim(), 'pod/web edited');
    assert.equal(ok(['get', 'pod', 'web', '-o', 'jsonpath={.metadata.labels.app}']), 'edited');

    assert.equal(ok(['delete', 'pod', 'web']).trim(), 'pod "web" deleted');
    const gone = run(['get', 'pod', 'web']);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /pods "web" not found/);
  });
}

void test('kubectl 1.27 explains from OpenAPI v2', { skip: binDir && existsSync(join(binDir, 'kubectl.1.27')) ? false : 'kubectl.1.27 is not installed' }, () => {
  const r = spawnSync(join(binDir!, 'kubectl.1.27'), ['--kubeconfig', server.kubeconfig, '--cache-dir', join(work, 'cache-explain'), 'explain', 'pod.spec.containers.ports', '--output=plaintext-openapiv2'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^RESOURCE: ports <\[\]Object>$/m);
  assert.match(r.stdout, /containerPort\s+<integer> -required-/);
});
