import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStatusError } from '../../api/errors.js';
import { TokenFileAuthenticator, bearerToken, parseTokenFile } from './tokenfile.js';
import type { UserInfo } from './user.js';

const withAuth = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as IncomingMessage;

void describe('parseTokenFile', () => {
  const cases: [string, string, [string, UserInfo][]][] = [
    ['three columns', 'abc,alice,uid-1\n', [['abc', { name: 'alice', uid: 'uid-1', groups: [] }]]],
    ['quoted groups', 'abc,alice,uid-1,"dev,ops"\n', [['abc', { name: 'alice', uid: 'uid-1', groups: ['dev', 'ops'] }]]],
    ['one group, CRLF, no final newline', 'abc,alice,1,dev\r\ndef,bob,2', [
      ['abc', { name: 'alice', uid: '1', groups: ['dev'] }],
      ['def', { name: 'bob', uid: '2', groups: [] }],
    ]],
    ['blank lines skipped', '\nabc,alice,1\n\n', [['abc', { name: 'alice', uid: '1', groups: [] }]]],
    ['empty token skipped', ',alice,1\nabc,bob,2\n', [['abc', { name: 'bob', uid: '2', groups: [] }]]],
    ['repeated token keeps the last row', 'abc,alice,1\nabc,bob,2\n', [['abc', { name: 'bob', uid: '2', groups: [] }]]],
    ['escaped quote', '"a""b",alice,1\n', [['a"b', { name: 'alice', uid: '1', groups: [] }]]],
  ];
  for (const [name, text, want] of cases) {
    void it(name, () => assert.deepEqual([...parseTokenFile(text, 'tokens.csv')], want));
  }

  void it('refuses rows with fewer than 3 columns, as upstream words it', () => {
    assert.throws(() => parseTokenFile('abc,alice\n', 'tokens.csv'), {
      message: "token file 'tokens.csv' must have at least 3 columns (token, user name, user uid), found 2",
    });
    assert.throws(() => parseTokenFile('"abc,alice,1\n', 'tokens.csv'), /unterminated/);
  });
});

void describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['  Bearer abc  ', 'abc'],
    ['Bearer abc extra', 'abc'],
    ['Bearer', undefined],
    ['Bearer  abc', undefined],
    ['Basic dXNlcjpwYXNz', undefined],
    [undefined, undefined],
  ];
  for (const [header, want] of cases) {
    void it(`${JSON.stringify(header)} → ${String(want)}`, () => assert.equal(bearerToken(withAuth(header)), want));
  }
});

void describe('TokenFileAuthenticator', () => {
  let dir: string;
  let authn: TokenFileAuthenticator;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kite-tokens-'));
    await writeFile(join(dir, 'tokens.csv'), 'secret-1,alice,u1,"dev,ops"\n');
    authn = await TokenFileAuthenticator.load(join(dir, 'tokens.csv'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  void it('maps a known token to its user', async () => {
    assert.deepEqual(await authn.authenticate(withAuth('Bearer secret-1')), { name: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
  });

  void it('has nothing to say without a bearer token', async () => {
    assert.equal(await authn.authenticate(withAuth()), undefined);
  });

  void it('rejects an unknown token with 401', async () => {
    await assert.rejects(authn.authenticate(withAuth('Bearer nope')), (err) => isStatusError(err) && err.code === 401);
  });

  void it('hands out copies: a caller changing groups does not change the table', async () => {
    const first = (await authn.authenticate(withAuth('Bearer secret-1')))!;
    first.groups.push('system:authenticated');
    assert.deepEqual((await authn.authenticate(withAuth('Bearer secret-1')))!.groups, ['dev', 'ops']);
  });
});
