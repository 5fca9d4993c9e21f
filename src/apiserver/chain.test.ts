import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildHandlerChain, defaultFilters, type NamedFilter, type RequestContext } from './chain.js';
import { FakeClock } from '../util/clock.js';
import { defaultRequestLimits, InflightLimiter } from './http/filters.js';

describe('request chain', () => {
  it('runs the filters in list order, the first outermost, then the handler', async () => {
    const log: string[] = [];
    const named = (name: string): NamedFilter => ({
      name,
      filter: async (ctx, next) => {
        log.push(`>${name}`);
        await next(ctx);
        log.push(`<${name}`);
      },
    });
    const chain = buildHandlerChain([named('a'), named('b')], async () => void log.push('handler'));
    await chain({} as RequestContext);
    assert.deepEqual(log, ['>a', '>b', 'handler', '<b', '<a']);
  });

  it('a filter that answers stops the request', async () => {
    let reached = false;
    const chain = buildHandlerChain([{ name: 'stop', filter: async () => undefined }], async () => void (reached = true));
    await chain({} as RequestContext);
    assert.equal(reached, false);
  });

  it("has kite's filters in upstream's order", () => {
    const deps = { authorizer: { authorize: async () => ({ decision: 'allow' as const }) }, limits: defaultRequestLimits, inflight: new InflightLimiter(defaultRequestLimits), clock: new FakeClock(), onLateError: () => undefined };
    assert.deepEqual(defaultFilters(deps).map((f) => f.name), ['timeout', 'authentication', 'impersonation', 'priority', 'authorization']);
  });
});
