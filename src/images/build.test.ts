import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildImage, buildKey, recipes, recipesDir } from './build.js';

const haveTools = ['/usr/bin/umoci', '/bin/busybox'].every((f) => existsSync(f));
const busybox = recipes.find((r) => r.name === 'busybox')!;

describe('image recipes', () => {
  it('name the references pods use and the repositories and tags the registry serves', () => {
    assert.deepEqual(
      recipes.map((r) => [r.reference, r.repository, r.tag, r.aliasTags ?? []]),
      [
        ['registry.k8s.io/pause:3.10', 'pause', '3.10', []],
        // Untagged references (`image: busybox`) mean latest.
        ['docker.io/library/busybox:1.35', 'library/busybox', '1.35', ['latest']],
        ['docker.io/library/nginx:1.22', 'library/nginx', '1.22', ['latest']],
      ],
    );
    assert.ok(existsSync(join(recipesDir(), 'pause', 'pause.c')));
  });

  it('builds busybox reproducibly and reuses the cache', { skip: haveTools ? false : 'needs umoci and busybox-static' }, async () => {
    const a = await mkdtemp(join(tmpdir(), 'kite-img-'));
    const b = await mkdtemp(join(tmpdir(), 'kite-img-'));
    try {
      const first = await buildImage(busybox, a);
      const again = await buildImage(busybox, a);
      const elsewhere = await buildImage(busybox, b);
      assert.equal(first.layout, join(a, `busybox-${await buildKey(busybox)}`));
      assert.equal(again.layout, first.layout);
      assert.equal(elsewhere.manifestDigest, first.manifestDigest, 'same inputs, same digest');
      assert.deepEqual(await readdir(a), [`busybox-${await buildKey(busybox)}`], 'no build leftovers');
      const index = JSON.parse(await readFile(join(first.layout, 'index.json'), 'utf8'));
      assert.equal(index.manifests[0].annotations['org.opencontainers.image.ref.name'], '1.35');
    } finally {
      await rm(a, { recursive: true, force: true });
      await rm(b, { recursive: true, force: true });
    }
  });
});
