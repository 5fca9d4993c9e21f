import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObjectBody, parseJson, parseYaml } from './body.js';
import { duplicateFields, maxNestingDepth } from '../../api/jsonscan.js';
import { StatusError } from '../../api/errors.js';

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

  it("answers Go's depth message for JSON and YAML nested past the bound", () => {
    const message = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof StatusError && err.code === 400);
        return err.message;
      }
      assert.fail('accepted');
    };
    const n = 10_001;
    assert.equal(message(() => parseJson(Buffer.from(`{"a":${'{"a":'.repeat(n)}1${'}'.repeat(n + 1)}`))), "couldn't get version/kind; json parse error: invalid character '{' exceeded max depth");
    assert.match(message(() => parseYaml(Buffer.from(`a: ${'['.repeat(n)}${']'.repeat(n)}\n`))), /^error converting YAML to JSON: yaml: exceeded max depth/);
    const block = Array.from({ length: maxNestingDepth + 1 }, (_, i) => `${'  '.repeat(i)}a:`).join('\n') + ' 1\n';
    assert.match(message(() => parseYaml(Buffer.from(block))), /exceeded max depth/);
  });

  it('remembers the duplicate keys JSON.parse collapses, by path', () => {
    const body = parseJson(Buffer.from('{"metadata":{"name":"a","labels":{"x":"1","x":"2"},"name":"b"},"spec":{"containers":[{"name":"c","name":"d"}]}}'));
    assert.deepEqual(duplicateFields(body), ['metadata.labels.x', 'metadata.name', 'spec.containers[0].name']);
    assert.deepEqual(duplicateFields(parseJson(Buffer.from('{"a":"\\"","b":{"a":1}}'))), []);
  });
});
