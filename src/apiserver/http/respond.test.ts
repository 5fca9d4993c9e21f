import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { warningHeaders } from './respond.js';

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
