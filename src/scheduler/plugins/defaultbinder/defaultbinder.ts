// DefaultBinder: binds through the pods/binding subresource.
import type { Pod } from '../../../api/types.js';
import type { CycleState } from '../../framework/cycle-state.js';
import type { BindPlugin, Handle, Plugin } from '../../framework/interface.js';
import { Status, type Result } from '../../framework/status.js';

export const NAME = 'DefaultBinder';

export class DefaultBinder implements BindPlugin {
  readonly name = NAME;

  constructor(private readonly handle: Handle) {}

  async bind(_state: CycleState, pod: Pod, nodeName: string): Promise<Result> {
    try {
      await this.handle.client.bind(pod, nodeName);
      return undefined;
    } catch (err) {
      return Status.error(err);
    }
  }
}

export const factory = (_args: unknown, handle: Handle): Plugin => new DefaultBinder(handle);
