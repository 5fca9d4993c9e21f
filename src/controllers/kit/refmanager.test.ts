import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { selectorFromSet } from '../../api/labels.js';
import { StatusError } from '../../api/errors.js';
import type { MetaObject } from '../../client/indexer.js';
import type { PodControl } from './podcontrol.js';
import { PodControllerRefManager, recheckDeletionTimestamp } from './refmanager.js';

class RecordingPodControl implements PodControl {
  readonly patches: { name: string; patch: object }[] = [];
  failPatch?: StatusError;
  async createPods(_ns: string, _t: PodTemplateSpec, _c: MetaObject, _r: OwnerReference): Promise<void> {}
  async createPodsWithGenerateName(): Promise<void> {}
  async deletePod(): Promise<void> {}
  async patchPod(_ns: string, name: string, patch: object): Promise<void> {
    if (this.failPatch) throw this.failPatch;
    this.patches.push({ name, patch });
  }
}

const rs = (deleting = false): MetaObject => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs', namespace: 'ns', uid: 'rs-uid', deletionTimestamp: deleting ? '2026-01-01T00:00:00Z' : undefined } });
const ref = (uid: string): OwnerReference => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid, controller: true, blockOwnerDeletion: true });

function pod(name: string, labels: Record<string, string>, owner?: string, extra: { namespace?: string; deleting?: boolean } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? 'ns',
      uid: `${name}-uid`,
      labels,
      ownerReferences: owner ? [ref(owner)] : undefined,
      deletionTimestamp: extra.deleting ? '2026-01-01T00:00:00Z' : undefined,
    },
  };
}

function manager(control: PodControl, owner = rs(), canAdopt?: () => Promise<void>) {
  return new PodControllerRefManager({ podControl: control, controller: owner, selector: selectorFromSet({ app: 'web' }), controllerApiVersion: 'apps/v1', controllerKind: 'ReplicaSet', canAdopt });
}

describe('PodControllerRefManager.claimPods', () => {
  it('keeps its matching pods, adopts matching orphans, releases its pods that no longer match, leaves others alone', async () => {
    const control = new RecordingPodControl();
    const pods = [
      pod('mine', { app: 'web' }, 'rs-uid'),
      pod('orphan', { app: 'web' }),
      pod('strayed', { app: 'db' }, 'rs-uid'),
      pod('theirs', { app: 'web' }, 'other-uid'),
      pod('unmatched-orphan', { app: 'db' }),
      pod('deleting-orphan', { app: 'web' }, undefined, { deleting: true }),
      pod('elsewhere', { app: 'web' }, undefined, { namespace: 'other' }),
    ];
    const { claimed, errors } = await manager(control).claimPods(pods);
    assert.deepEqual(errors, []);
    assert.deepEqual(claimed.map((p) => p.metadata!.name), ['mine', 'orphan']);
    assert.deepEqual(control.patches, [
      {
        name: 'orphan',
        patch: { metadata: { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true, blockOwnerDeletion: true }], uid: 'orphan-uid' } },
      },
      { name: 'strayed', patch: { metadata: { ownerReferences: [{ $patch: 'delete', uid: 'rs-uid' }], uid: 'strayed-uid' } } },
    ]);
  });

  it('a controller being deleted neither adopts nor releases', async () => {
    const control = new RecordingPodControl();
    const { claimed } = await manager(control, rs(true)).claimPods([pod('orphan', { app: 'web' }), pod('strayed', { app: 'db' }, 'rs-uid'), pod('mine', { app: 'web' }, 'rs-uid')]);
    assert.deepEqual(claimed.map((p) => p.metadata!.name), ['mine']);
    assert.deepEqual(control.patches, []);
  });

  it('the fresh-owner recheck refuses adoption once, for the whole claim', async () => {
    const control = new RecordingPodControl();
    let reads = 0;
    const canAdopt = recheckDeletionTimestamp(async () => {
      reads++;
      return rs(true);
    });
    const { claimed, errors } = await manager(control, rs(), canAdopt).claimPods([pod('o1', { app: 'web' }), pod('o2', { app: 'web' })]);
    assert.deepEqual(claimed, []);
    assert.equal(reads, 1);
    assert.equal(errors.length, 2);
    assert.equal(errors[0]!.message, "can't adopt Pod ns/o1 (o1-uid): ns/rs has just been deleted at 2026-01-01T00:00:00Z");
  });

  it('an orphan that vanished is not claimed and is no error; release of a gone pod is fine', async () => {
    const control = new RecordingPodControl();
    control.failPatch = new StatusError(404, 'NotFound', 'pods "orphan" not found');
    const { claimed, errors } = await manager(control).claimPods([pod('orphan', { app: 'web' }), pod('strayed', { app: 'db' }, 'rs-uid')]);
    assert.deepEqual(claimed, []);
    assert.deepEqual(errors, []);
  });
});
