import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { queryBool, queryInt64 } from './query.js';

describe('queryBool (the parameter codec, not strconv.ParseBool)', () => {
  for (const v of ['true', 'True', 'TRUE', '1', 't', 'yes', 'no', 'f', '']) it(`${JSON.stringify(v)} is true`, () => assert.equal(queryBool(v), true));
  for (const v of ['false', 'False', 'FALSE', 'fAlSe', '0']) it(`${JSON.stringify(v)} is false`, () => assert.equal(queryBool(v), false));
});

describe('queryInt64', () => {
  it('parses signed decimals', () => {
    assert.equal(queryInt64('42'), 42);
    assert.equal(queryInt64('+7'), 7);
    assert.equal(queryInt64('-3'), -3);
    assert.equal(queryInt64('9007199254740991'), Number.MAX_SAFE_INTEGER);
  });
  it("refuses what Go's ParseInt refuses, in its words", () => {
    assert.throws(() => queryInt64('1.5'), /^Error: strconv\.ParseInt: parsing "1\.5": invalid syntax$/);
    assert.throws(() => queryInt64('0x10'), /invalid syntax/);
    assert.throws(() => queryInt64(''), /parsing "": invalid syntax/);
    assert.throws(() => queryInt64('9223372036854775808'), /parsing "9223372036854775808": value out of range/);
  });
});
