import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObjectBody, maxNestingDepth, parseJson } from './body.js';
import { StatusError } from '../errors.js';

const code = (fn: () => unknown): number => {
  try {
    fn();
    return 0;
  } catch (err) {
    assert.ok(err instanceof StatusError);
    return err.code;
  }
};

describe('request bodies', () => {
  it('decodes JSON and YAML objects', () => {
    assert.deepEqual(decodeObjectBody('application/json', Buffer.from('{"a":1}')), { a: 1 });
    assert.deepEqual(decodeObjectBody('application/yaml; charset=utf-8', Buffer.from('a: 1\nb: [x]\n')), { a: 1, b: ['x'] });
  });

  it('refuses what is not one object', () => {
    assert.equal(code(() => decodeObjectBody('application/json', Buffer.from('[1]'))), 400);
    assert.equal(code(() => decodeObjectBody('application/json', Buffer.from(''))), 400);
    assert.equal(code(() => decodeObjectBody('application/yaml', Buffer.from('a: 1\n---\nb: 2\n'))), 400);
    assert.equal(code(() => decodeObjectBody('text/plain', Buffer.from('{}'))), 415);
  });

  it('caps nesting depth, ignoring brackets inside strings', () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    assert.equal(code(() => parseJson(Buffer.from(deep(maxNestingDepth + 1)))), 400);
    assert.deepEqual(parseJson(Buffer.from(`{"s":"${'['.repeat(maxNestingDepth + 5)}"}`)), { s: '['.repeat(maxNestingDepth + 5) });
    assert.equal(code(() => parseJson(Buffer.from(deep(100)))), 0);
  });
});
