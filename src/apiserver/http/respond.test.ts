import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { writeError, writeJson, writeObject } from './respond.js';
import { methodNotAllowed } from '../../api/errors.js';

/** Just enough of a ServerResponse to see what is written. */
function recorder() {
  const out = { code: 0, headers: {} as Record<string, unknown>, body: '', headersSent: false };
  const res = {
    get headersSent() {
      return out.headersSent;
    },
    setHeader: (k: string, v: unknown) => (out.headers[k] = v),
    writeHead: (code: number, headers: Record<string, unknown>) => {
      out.code = code;
      Object.assign(out.headers, headers);
      out.headersSent = true;
    },
    end: (body: string) => (out.body = body),
  };
  return { res: res as unknown as ServerResponse, out };
}

describe('JSON bodies end in a newline, as Go\'s json.Encoder writes them', () => {
  it('objects, pre-serialized objects and Status errors', () => {
    const cases: [string, (res: ServerResponse) => void, string][] = [
      ['writeObject', (res) => writeObject(res, 200, { a: 1 }), '{"a":1}\n'],
      ['writeJson', (res) => writeJson(res, 201, '{"b":2}'), '{"b":2}\n'],
      ['writeError', (res) => writeError(res, methodNotAllowed()), '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n'],
    ];
    for (const [what, write, body] of cases) {
      const { res, out } = recorder();
      write(res);
      assert.equal(out.body, body, what);
      assert.equal(out.headers['Content-Length'], String(Buffer.byteLength(body)), what);
    }
  });

  it('YAML is left as the YAML library ends it', () => {
    const { res, out } = recorder();
    writeObject(res, 200, { a: 1 }, true);
    assert.equal(out.body, 'a: 1\n');
  });
});
