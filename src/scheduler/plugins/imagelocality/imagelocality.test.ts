import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CycleState } from '../../framework/cycle-state.js';
import { makeNode, makePod } from '../../testing/builders.js';
import { handleFor, snapshotOf } from '../../testing/plugins.js';
import { ImageLocality, normalizedImageName } from './imagelocality.js';

const mb = 1024 * 1024;

describe('ImageLocality', () => {
  const nodes = [
    makeNode().name('n1').image(250 * mb, 'nginx:1.25').image(10 * mb, 'busybox:latest').obj(),
    makeNode().name('n2').image(250 * mb, 'nginx:1.25').image(3000 * mb, 'big:1').obj(),
    makeNode().name('n3').obj(),
  ];
  const snapshot = snapshotOf(nodes);
  const pl = new ImageLocality(handleFor(snapshot));
  const cases = [
    // 250MB on 2 of 3 nodes → 166MB scaled; (166-23)*100/(1000-23) = 14
    { name: 'an image on two of three nodes', images: ['nginx:1.25'], node: 'n1', want: 14 },
    { name: 'below the minimum threshold', images: ['busybox'], node: 'n1', want: 0 },
    { name: 'no image present', images: ['nginx:1.25'], node: 'n3', want: 0 },
    // 3000MB on 1 of 3 nodes → 1000MB, the per-container maximum → 100
    { name: 'capped at the maximum', images: ['big:1'], node: 'n2', want: 100 },
    // two containers: max threshold 2000MB; 1000 + 166 = 1166 → (1166-23)*100/(2000-23) = 57
    { name: 'sums over containers', images: ['big:1', 'nginx:1.25'], node: 'n2', want: 57 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const pod = makePod().images(...c.images).obj();
      const state = new CycleState();
      assert.equal(pl.preScore(state, pod, snapshot.list()), undefined);
      assert.equal(pl.score(state, pod, snapshot.get(c.node)!), c.want);
    });
  }

  it('skips pods whose images no candidate node has', () => {
    assert.equal(pl.preScore(new CycleState(), makePod().images('redis').obj(), snapshot.list())?.code, 'Skip');
  });

  it('normalizes image names to the latest tag', () => {
    assert.equal(normalizedImageName('nginx'), 'nginx:latest');
    assert.equal(normalizedImageName('registry:5000/app'), 'registry:5000/app:latest');
    assert.equal(normalizedImageName('registry:5000/app:v1'), 'registry:5000/app:v1');
  });
});
