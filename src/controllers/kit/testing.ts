// The harness every controller unit test shares: the real API in process (FakeApi) on virtual time,
// an informer factory and one controller on a client of the controller's own user, and a `settle`
// that lets watches and workers run.
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Pod } from 'kubernetes-types/core/v1.js';
import type { UserInfo } from '../../apiserver/authn/user.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import type { Client } from '../../client/client.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeRecorder } from '../../client/record/recorder.js';
import { FakeClock } from '../../util/clock.js';
import type { Logger } from '../../util/log.js';

/** Polls fn (a failed call counts as not yet) until it has a value, for tests on real time. */
export async function until<T>(fn: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** What every controller's options start with. */
export interface ControllerDeps {
  client: Client;
  informers: SharedInformerFactory;
  clock: FakeClock;
  logger: Logger;
}

export interface ControllerHarnessOptions {
  /** The controller's user (its service account, or the controller manager). */
  user: UserInfo;
  /** Virtual start time; default 2026-01-01T00:00:00Z. */
  now?: number;
  /** settle's default bound in steps (default 40) and its step in ms (default 50). */
  steps?: number;
  stepMs?: number;
  /** Steps start() settles after the controller starts; default `steps`. */
  startSteps?: number;
}

type Condition = () => Promise<boolean> | boolean;

export abstract class ControllerHarness<C extends { start(): void; stop(): Promise<void> }> {
  readonly clock: FakeClock;
  readonly recorder = new FakeRecorder();
  readonly user: UserInfo;
  admin!: Client;
  api!: FakeApi;
  controller!: C;
  protected informers!: SharedInformerFactory;

  constructor(private readonly options: ControllerHarnessOptions) {
    this.user = options.user;
    this.clock = new FakeClock(options.now ?? Date.UTC(2026, 0, 1));
  }

  protected abstract newController(deps: ControllerDeps): C;

  /** Starts the API with namespace "ns", then the controller and its informers. */
  async start(): Promise<this> {
    this.api = await FakeApi.start({ clock: this.clock });
    this.admin = this.api.client();
    await this.admin.resource('namespaces').create({ metadata: { name: 'ns' } });
    const client = this.api.client(this.user);
    this.informers = new SharedInformerFactory({ client, clock: this.clock });
    this.controller = this.newController({ client, informers: this.informers, clock: this.clock, logger: pino({ level: 'silent' }) });
    this.controller.start();
    this.informers.start();
    await this.settle(undefined, this.options.startSteps);
    return this;
  }

  async stop(): Promise<void> {
    await this.controller.stop();
    await this.informers.shutdown();
    await this.api.stop();
  }

  /** Advances virtual time in small steps until cond holds (bounded); returns whether it did. */
  async settle(cond: Condition = () => false, steps = this.options.steps ?? 40, stepMs = this.options.stepMs ?? 50): Promise<boolean> {
    for (let i = 0; i < steps; i++) {
      await this.clock.advance(stepMs);
      if (await cond()) return true;
    }
    return false;
  }

  pods() {
    return this.admin.resource<Pod>('', 'v1', 'pods').namespace('ns');
  }

  async listPods(): Promise<Pod[]> {
    return (await this.pods().list()).items;
  }
}
