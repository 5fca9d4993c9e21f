// Per-cycle state shared by a profile's plugins for one pod: PreFilter computes once, Filter and
// Score read per node. Keys are typed, so a plugin reads back exactly what it wrote.

/** Data kept in a CycleState; clone() lets preemption and nominated-pod evaluation fork the state. */
export interface StateData {
  clone(): StateData;
}

/** A typed key; create one per plugin datum at module level. */
export class StateKey<T extends StateData> {
  declare private readonly _type: T;
  constructor(readonly name: string) {}
}

export class CycleState {
  private readonly data = new Map<StateKey<StateData>, StateData>();
  /** Plugins whose PreFilter returned Skip: their Filter is not run this cycle. */
  skipFilterPlugins = new Set<string>();
  /** Plugins whose PreScore returned Skip: their Score is not run this cycle. */
  skipScorePlugins = new Set<string>();

  write<T extends StateData>(key: StateKey<T>, value: T): void {
    this.data.set(key, value);
  }

  read<T extends StateData>(key: StateKey<T>): T | undefined {
    return this.data.get(key) as T | undefined;
  }

  delete(key: StateKey<StateData>): void {
    this.data.delete(key);
  }

  clone(): CycleState {
    const c = new CycleState();
    for (const [k, v] of this.data) c.data.set(k, v.clone());
    c.skipFilterPlugins = new Set(this.skipFilterPlugins);
    c.skipScorePlugins = new Set(this.skipScorePlugins);
    return c;
  }
}

/** A value a plugin computes once per cycle and never mutates, so a forked state can share it. */
export class ReadOnlyState<T> implements StateData {
  constructor(readonly value: T) {}
  clone(): this {
    return this;
  }
}
