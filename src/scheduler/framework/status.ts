// The outcome of a plugin call, as upstream's framework.Status: a code plus human-readable reasons,
// never an exception, for expected results. `undefined` means Success on hot paths (Go's nil *Status),
// so a filter that passes allocates nothing.

export enum Code {
  Success = 'Success',
  /** An internal failure: the pod is retried with backoff, not reported as unschedulable. */
  Error = 'Error',
  /** The pod does not fit now; preemption may help. */
  Unschedulable = 'Unschedulable',
  /** The pod does not fit and preemption cannot help (e.g. a node selector mismatch). */
  UnschedulableAndUnresolvable = 'UnschedulableAndUnresolvable',
  /** Permit: the pod waits until a plugin allows or rejects it. */
  Wait = 'Wait',
  /** PreFilter/PreScore: the plugin has nothing to do for this pod; its Filter/Score is not run. */
  Skip = 'Skip',
  /** PreEnqueue/Filter: rejected until something outside the scheduler changes (not retried by backoff). */
  Pending = 'Pending',
}

export class Status {
  /** The plugin that returned it (set by the framework). */
  plugin = '';

  constructor(
    readonly code: Code,
    readonly reasons: readonly string[] = [],
    /** The underlying error for Code.Error. */
    readonly error?: Error,
  ) {}

  static of(code: Code, ...reasons: string[]): Status {
    return new Status(code, reasons);
  }

  static error(err: unknown): Status {
    const e = err instanceof Error ? err : new Error(String(err));
    return new Status(Code.Error, [e.message], e);
  }

  withPlugin(name: string): this {
    this.plugin = name;
    return this;
  }

  /** The reasons joined as upstream's Status.Message. */
  message(): string {
    return this.reasons.join(', ');
  }

  /** Unschedulable, UnschedulableAndUnresolvable or Pending. */
  isRejected(): boolean {
    return this.code === Code.Unschedulable || this.code === Code.UnschedulableAndUnresolvable || this.code === Code.Pending;
  }

  isSkip(): boolean {
    return this.code === Code.Skip;
  }

  /** The status as an Error (the original one for Code.Error). */
  asError(): Error {
    return this.error ?? new Error(this.message());
  }
}

/** A plugin result: undefined (or a Success Status) means success. */
export type Result = Status | undefined;

export const isSuccess = (s: Result): boolean => s === undefined || s.code === Code.Success;
