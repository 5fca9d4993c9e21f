import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { FakeClock } from '../../util/clock.js';
import { isStatusError } from '../../api/errors.js';
import { ConsoleSessions, sessionLifetimeMs, sessionTokenPrefix } from './sessions.js';

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` }, socket: {} }) as IncomingMessage;
const alice = { name: 'alice', groups: ['dev'] };

describe('ConsoleSessions', () => {
  it('names the session user for its token, and leaves other tokens to the other authenticators', async () => {
    const sessions = new ConsoleSessions(new FakeClock());
    const s = sessions.open(alice);
    assert.ok(s.token.startsWith(sessionTokenPrefix) && s.token.length > sessionTokenPrefix.length + 40);
    assert.deepEqual(await sessions.authenticate(bearer(s.token)), alice);
    assert.equal(await sessions.authenticate(bearer('some-other-token')), undefined);
    assert.equal(await sessions.authenticate({ headers: {}, socket: {} } as IncomingMessage), undefined);
  });

  it('refuses an unknown session token with a 401', async () => {
    const sessions = new ConsoleSessions(new FakeClock());
    await assert.rejects(sessions.authenticate(bearer(`${sessionTokenPrefix}guessed`)), (err) => isStatusError(err) && err.code === 401);
  });

  it('ends a session after 8 hours', async () => {
    const clock = new FakeClock();
    const sessions = new ConsoleSessions(clock);
    const s = sessions.open(alice);
    assert.equal(s.expires, clock.now() + 8 * 3600_000);
    await clock.advance(sessionLifetimeMs - 1);
    assert.deepEqual(await sessions.authenticate(bearer(s.token)), alice);
    await clock.advance(1);
    await assert.rejects(sessions.authenticate(bearer(s.token)), (err) => isStatusError(err) && err.code === 401);
    assert.equal(sessions.size, 0);
  });

  it('revokes the session of the logout request only', async () => {
    const sessions = new ConsoleSessions(new FakeClock());
    const a = sessions.open(alice);
    const b = sessions.open({ name: 'bob', groups: [] });
    assert.equal(sessions.revoke(bearer(a.token)), true);
    assert.equal(sessions.revoke(bearer(a.token)), false);
    await assert.rejects(sessions.authenticate(bearer(a.token)));
    assert.equal((await sessions.authenticate(bearer(b.token)))?.name, 'bob');
  });

  it('keeps at most its bound of sessions, expired ones going first, then the oldest', async () => {
    const clock = new FakeClock();
    const sessions = new ConsoleSessions(clock, 3);
    const first = sessions.open(alice);
    await clock.advance(sessionLifetimeMs);
    const [a, b, c] = [sessions.open(alice), sessions.open(alice), sessions.open(alice)];
    assert.equal(sessions.size, 3);
    await assert.rejects(sessions.authenticate(bearer(first.token)));
    const d = sessions.open(alice);
    assert.equal(sessions.size, 3);
    await assert.rejects(sessions.authenticate(bearer(a.token)));
    for (const s of [b, c, d]) assert.equal((await sessions.authenticate(bearer(s.token)))?.name, 'alice');
  });

  it('hands out copies: a caller changing the user changes no session', async () => {
    const sessions = new ConsoleSessions(new FakeClock());
    const s = sessions.open(alice);
    (await sessions.authenticate(bearer(s.token)))!.groups.push('system:masters');
    assert.deepEqual((await sessions.authenticate(bearer(s.token)))?.groups, ['dev']);
  });
});
