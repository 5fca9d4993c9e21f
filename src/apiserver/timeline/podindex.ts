// The pods by UID, kept from a watch on the pods watch cache (each event is one map write, where
// rebuilding from the whole cache on every change cost a full pass per batch under a burst): which
// node a recorded pod is bound to, and its controller. The same watch tells when a pod leaves
// storage, whichever request made it go.
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { StoredObject } from '../../api/meta.js';
import { everything } from '../../api/labels.js';
import { everythingFields } from '../../api/fields.js';
import type { Logger } from '../../util/log.js';
import { Selection } from '../registry/selection.js';
import type { Registries } from '../registry/registries.js';

export class PodIndex {
  private byUid = new Map<string, Pod>();

  get(uid: string): Pod | undefined {
    return this.byUid.get(uid);
  }

  /**
   * Watches every pod: the index is filled from the watch's initial state (swapped in whole once it
   * is sent, so a restarted watch never shows an empty index) and follows each change; `deleted`
   * hears of each pod that leaves storage. Returns the watch's cancel.
   */
  async watch(registries: Registries, logger: Logger, deleted: (pod: StoredObject) => void = () => {}): Promise<() => void> {
    const pods = registries.of('', 'pods');
    let stopped = false;
    let cancel = () => {};
    const start = async (): Promise<void> => {
      let filling: Map<string, Pod> | undefined = new Map();
      cancel = await pods.watch(
        '',
        { selection: new Selection(everything(), everythingFields()), sendInitialEvents: true },
        {
          event: (type, obj) => {
            const uid = obj.metadata.uid;
            if (!uid) return true;
            const into = filling ?? this.byUid;
            if (type === 'DELETED') {
              into.delete(uid);
              if (!filling) deleted(obj);
            } else into.set(uid, obj as Pod);
            return true;
          },
          initialEventsEnd: () => {
            if (filling) this.byUid = filling;
            filling = undefined;
          },
          fail: (err) => restart(err),
          end: () => restart(undefined),
        },
      );
    };
    const restart = (err: unknown) => {
      if (stopped) return;
      logger.debug({ err }, 'pods watch of the timeline ended; watching again');
      start().catch((e: unknown) => logger.warn({ err: e }, 'watching pods for the timeline failed'));
    };
    await start();
    return () => {
      stopped = true;
      cancel();
    };
  }
}
