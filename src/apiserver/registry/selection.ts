// Which objects a list or watch wants: a label selector and a field selector.
import type { StoredObject } from '../../api/meta.js';
import type { ResourceStrategy } from './strategy.js';

export interface Matcher<T> {
  matches(input: T): boolean;
  empty(): boolean;
}

export class Selection {
  constructor(
    private readonly labels: Matcher<Record<string, string>>,
    private readonly fields: Matcher<Record<string, string>>,
  ) {}

  get empty(): boolean {
    return this.labels.empty() && this.fields.empty();
  }

  matches(obj: StoredObject, strategy: ResourceStrategy): boolean {
    if (!this.labels.empty() && !this.labels.matches(obj.metadata.labels ?? {})) return false;
    return this.fields.empty() || this.fields.matches(strategy.selectableFields(obj));
  }
}
