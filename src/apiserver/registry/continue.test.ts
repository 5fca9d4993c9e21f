import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeContinue, encodeContinue } from './continue.js';
import { StatusError } from '../../api/errors.js';

const b64 = (text: string) => Buffer.from(text).toString('base64url');

function refusal(token: string): string {
  try {
    decodeContinue(token);
  } catch (err) {
    assert.ok(err instanceof StatusError);
    assert.equal(err.code, 400);
    return err.message;
  }
  assert.fail(`token ${token} was accepted`);
}

describe('continue tokens', () => {
  it('round-trips what the server encodes', () => {
    assert.deepEqual(decodeContinue(encodeContinue(42, 'default/cm-1')), { rv: 42, start: 'default/cm-1' });
  });

  it('reads a negative revision as "the latest", as upstream does', () => {
    assert.deepEqual(decodeContinue(b64('{"v":"meta.k8s.io/v1","rv":-1,"start":"default/a\\u0000"}')), { rv: undefined, start: 'default/a' });
  });

  it('matches field names as Go does (case-insensitively; null leaves the zero value)', () => {
    assert.deepEqual(decodeContinue(b64('{"V":"meta.k8s.io/v1","RV":3,"Start":"a","x":null,"other":[1]}')), { rv: 3, start: 'a' });
  });

  const cases: [string, string, string][] = [
    ['null', b64('null'), 'continue key is not valid: server does not recognize this encoded version '],
    ['an empty object', b64('{}'), 'continue key is not valid: server does not recognize this encoded version '],
    ['a number', b64('7'), 'continue key is not valid: json: cannot unmarshal number into Go value of type storage.continueToken'],
    ['an array', b64('[1]'), 'continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken'],
    ['a string', b64('"x"'), 'continue key is not valid: json: cannot unmarshal string into Go value of type storage.continueToken'],
    ['a boolean', b64('true'), 'continue key is not valid: json: cannot unmarshal bool into Go value of type storage.continueToken'],
    ['a version of another type', b64('{"v":1}'), 'continue key is not valid: json: cannot unmarshal number into Go struct field continueToken.v of type string'],
    ['a revision as a string', b64('{"v":"meta.k8s.io/v1","rv":"5","start":"a"}'), 'continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64'],
    ['a fractional revision', b64('{"v":"meta.k8s.io/v1","rv":1.5,"start":"a"}'), 'continue key is not valid: json: cannot unmarshal number 1.5 into Go struct field continueToken.rv of type int64'],
    ['a revision past int64', b64('{"v":"meta.k8s.io/v1","rv":1e30,"start":"a"}'), 'continue key is not valid: json: cannot unmarshal number 1e+30 into Go struct field continueToken.rv of type int64'],
    ['a start key of another type', b64('{"v":"meta.k8s.io/v1","rv":1,"start":{}}'), 'continue key is not valid: json: cannot unmarshal object into Go struct field continueToken.start of type string'],
    ['an unknown version', b64('{"v":"v2","rv":1,"start":"a"}'), 'continue key is not valid: server does not recognize this encoded version v2'],
    ['revision 0', b64('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}'), 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)'],
    ['no revision', b64('{"v":"meta.k8s.io/v1","start":"a"}'), 'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)'],
    ['an empty start key', b64('{"v":"meta.k8s.io/v1","rv":1,"start":""}'), 'continue key is not valid: encoded start key empty (version meta.k8s.io/v1)'],
    ['a traversing start key', b64('{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}'), 'continue key is not valid: ../secrets/x'],
    ['a start key with an empty element', b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a//b"}'), 'continue key is not valid: a//b'],
    ['a trailing slash', b64('{"v":"meta.k8s.io/v1","rv":1,"start":"a/"}'), 'continue key is not valid: a/'],
    ['padding (the encoding is unpadded)', `${b64('{"v":1}')}=`, 'continue key is not valid: illegal base64 data at input byte 10'],
    ['a character outside base64url', 'ab+c', 'continue key is not valid: illegal base64 data at input byte 2'],
    ['a lone last character', 'abcde', 'continue key is not valid: illegal base64 data at input byte 4'],
    ['malformed JSON', b64('{"v"'), 'continue key is not valid: '],
  ];
  for (const [name, token, message] of cases) {
    it(`refuses ${name} with upstream's 400`, () => {
      const got = refusal(token);
      assert.ok(got.startsWith(`invalid continue token: ${message}`), got);
    });
  }
});
