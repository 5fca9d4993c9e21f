import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateHeaderValue, type ServerResponse } from 'node:http';
import { addResponseWarning, warningHeaders, writeError, writeJson, writeObject } from './respond.js';
import { methodNotAllowed } from '../../api/errors.js';

/** Just enough of a ServerResponse to see what is written. */
function recorder() {
  const out = { code: 0, headers: {} as Record<string, unknown>, body: '', headersSent: false };
  const res = {
    get headersSent() {
      return out.headersSent;
    },
    setHeader: (k: string, v: unknown) => (out.headers[k] = v),
    getHeader: (k: string) => out.headers[k],
    writeHead: (code: number, headers: Record<string, unknown>) => {
      out.code = code;
      Object.assign(out.headers, headers);
      out.headersSent = true;
    },
    end: (body: string | Buffer) => (out.body = body.toString()),
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

  it("a request's own warning comes before the handler's", () => {
    const { res, out } = recorder();
    addResponseWarning(res, 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice');
    writeObject(res, 201, { a: 1 }, false, ['unknown field "x"']);
    assert.deepEqual(out.headers.Warning, ['299 - "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"', '299 - "unknown field \\"x\\""']);
  });

  it('YAML is left as the YAML library ends it', () => {
    const { res, out } = recorder();
    writeObject(res, 200, { a: 1 }, true);
    assert.equal(out.body, 'a: 1\n');
  });
});

/** What a client reads: the header's bytes as UTF-8. */
const onTheWire = (h: string) => Buffer.from(h, 'latin1').toString('utf8');

describe('warningHeaders', () => {
  it('quotes as upstream: only " and \\ escaped', () => {
    assert.deepEqual(warningHeaders(['unknown field "spec.a\\b"']), ['299 - "unknown field \\"spec.a\\\\b\\""']);
  });

  it('sends text beyond Latin-1 as its UTF-8 bytes, in a value Node accepts', () => {
    const [h] = warningHeaders(['unknown field "名"']);
    assert.equal(onTheWire(h!), '299 - "unknown field \\"名\\""');
    for (const v of warningHeaders(['unknown field "名"', 'emoji 😀', 'é'])) assert.doesNotThrow(() => validateHeaderValue('Warning', v));
    assert.equal(onTheWire(warningHeaders(['emoji 😀'])[0]!), '299 - "emoji 😀"');
  });

  it('drops texts with control characters and empty ones, and repeats none', () => {
    assert.deepEqual(warningHeaders(['a\nb', 'c\u0000', 'd\u007f', 'e\u0085', '', 'x', 'x']), ['299 - "x"']);
  });

  it('reads a lone surrogate as U+FFFD, as Go decoded it', () => {
    assert.equal(onTheWire(warningHeaders(['bad \ud800 text'])[0]!), '299 - "bad \ufffd text"');
  });

  it('truncates every warning to 256 runes once they pass 4096 in all, as upstream', () => {
    const long = (c: string) => c.repeat(1000);
    const out = warningHeaders(['a', 'b', 'c', 'd', 'e'].map(long));
    assert.equal(out.length, 5);
    for (const h of out) assert.equal(h.length, '299 - ""'.length + 256);
    // Within the budget, nothing is cut.
    assert.equal(warningHeaders([long('a')])[0]!.length, '299 - ""'.length + 1000);
  });
});
