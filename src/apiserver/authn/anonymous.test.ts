import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { AnonymousAuthenticator } from './anonymous.js';
import { anonymousUser } from './user.js';

void describe('AnonymousAuthenticator', () => {
  const authn = new AnonymousAuthenticator(['/healthz', '/version']);
  const cases: [string, boolean][] = [
    ['/healthz', true],
    ['/version?timeout=5s', true],
    ['/healthz/etcd', false],
    ['/api/v1/pods', false],
    ['/', false],
  ];
  for (const [url, anonymous] of cases) {
    void it(`${url} → ${anonymous ? 'anonymous' : 'unauthenticated'}`, async () => {
      assert.deepEqual(await authn.authenticate({ url, headers: {} } as IncomingMessage), anonymous ? anonymousUser : undefined);
    });
  }
});
