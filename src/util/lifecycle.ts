// One lifecycle for every long-lived part of kite (VS Code's disposables, client-go's
// Run/stop-channel pairs): a Service starts and stops asynchronously; a ServiceGroup starts its
// members in order and stops them in reverse, so what was started last (and may depend on the
// rest) goes first; a DisposableStore releases registrations (event handlers, listeners) at once.

/** Something that releases what it holds when disposed; disposing twice is harmless. */
export interface Disposable {
  dispose(): void;
}

export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/** Disposables released together, newest first. */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  /** Adds `d`; once the store is disposed, `d` is disposed at once instead. */
  add<T extends Disposable>(d: T): T {
    if (this.disposed) d.dispose();
    else this.items.push(d);
    return d;
  }

  dispose(): void {
    this.disposed = true;
    for (const d of this.items.splice(0).reverse()) d.dispose();
  }
}

/** A component with side effects only between start() and stop(). */
export interface Service {
  /** Names the service in errors and logs. */
  readonly name: string;
  start(): Promise<void>;
  /** Undoes start(); safe to call when start() failed or never ran. */
  stop(): Promise<void>;
}

/** A service from two functions (for parts that are not classes of their own). */
export function service(name: string, start: () => Promise<void> | void, stop: () => Promise<void> | void = () => {}): Service {
  return { name, start: async () => start(), stop: async () => stop() };
}

/** Thrown by ServiceGroup.stop when members failed to stop; every member was still asked. */
export class StopError extends Error {
  constructor(readonly failures: { name: string; error: unknown }[]) {
    super(`stopping ${failures.map((f) => `${f.name}: ${f.error instanceof Error ? f.error.message : String(f.error)}`).join('; ')}`);
  }
}

/**
 * Services started in order and stopped in reverse. A start that fails stops the members already
 * started and the failing one (in reverse) and rethrows, so a half-started group leaves nothing
 * running.
 */
export class ServiceGroup implements Service {
  private readonly members: Service[] = [];
  private started: Service[] = [];

  constructor(
    readonly name: string,
    members: Iterable<Service> = [],
  ) {
    for (const m of members) this.add(m);
  }

  /** Appends a member; it starts after those added before it. */
  add<T extends Service>(member: T): T {
    this.members.push(member);
    return member;
  }

  async start(): Promise<void> {
    for (const m of this.members) {
      if (this.started.includes(m)) continue;
      // Counted as started before it is: a member that fails half-way is stopped too.
      this.started.push(m);
      try {
        await m.start();
      } catch (err) {
        await this.stop().catch(() => {});
        throw err;
      }
    }
  }

  async stop(): Promise<void> {
    const failures: { name: string; error: unknown }[] = [];
    for (const m of this.started.splice(0).reverse()) {
      try {
        await m.stop();
      } catch (error) {
        failures.push({ name: m.name, error });
      }
    }
    if (failures.length) throw new StopError(failures);
  }
}
