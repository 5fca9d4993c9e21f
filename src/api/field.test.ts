import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage, duplicate, fieldErrorMessage, forbidden, internalError, invalid, notFound, notSupported, omitValue, Path, rawValue, required, tooLong, tooMany, typeInvalid } from './field.js';

const p = Path.root('spec').child('containers').index(0).child('image');

test('each error type renders as upstream field.Error.Error()', () => {
  const cases: [ReturnType<typeof required>, string][] = [
    [required(p, ''), 'spec.containers[0].image: Required value'],
    [required(p, 'must specify a handler type'), 'spec.containers[0].image: Required value: must specify a handler type'],
    [invalid(p, 'a b', 'bad'), 'spec.containers[0].image: Invalid value: "a b": bad'],
    [invalid(p, 5, 'must be 1'), 'spec.containers[0].image: Invalid value: 5: must be 1'],
    [invalid(p, null, 'x'), 'spec.containers[0].image: Invalid value: null: x'],
    [invalid(p, omitValue, 'x'), 'spec.containers[0].image: Invalid value: x'],
    [invalid(p, ['a', 'b'], 'x'), 'spec.containers[0].image: Invalid value: []string{"a", "b"}: x'],
    [invalid(p, { b: '2', a: '1' }, 'x'), 'spec.containers[0].image: Invalid value: map[string]string{"a":"1", "b":"2"}: x'],
    [invalid(p, rawValue('500m'), 'must be an integer'), 'spec.containers[0].image: Invalid value: 500m: must be an integer'],
    [typeInvalid(p, 'x', 'must be a string'), 'spec.containers[0].image: Invalid value: "x": must be a string'],
    [forbidden(p, 'no'), 'spec.containers[0].image: Forbidden: no'],
    [duplicate(p, 'x'), 'spec.containers[0].image: Duplicate value: "x"'],
    [notFound(p, 'v'), 'spec.containers[0].image: Not found: "v"'],
    [notSupported(p, 'X', ['A', 'B']), 'spec.containers[0].image: Unsupported value: "X": supported values: "A", "B"'],
    [tooLong(p, 'long value', 262144), 'spec.containers[0].image: Too long: may not be more than 262144 bytes'],
    [tooLong(p, 'v', 1), 'spec.containers[0].image: Too long: may not be more than 1 byte'],
    [tooMany(p, 1001, 1000), 'spec.containers[0].image: Too many: 1001: must have at most 1000 items'],
    [tooMany(p, -1, 1000), 'spec.containers[0].image: Too many: must have at most 1000 items'],
    [internalError(p, 'boom'), 'spec.containers[0].image: Internal error: boom'],
  ];
  for (const [err, want] of cases) assert.equal(fieldErrorMessage(err), want);
});

test('paths: keys, indexes and the empty root', () => {
  assert.equal(`${Path.root('data').key('a.b')}`, 'data[a.b]');
  assert.equal(`${Path.root('')}`, '[]');
  assert.equal(`${Path.root('metadata').child('labels', 'x')}`, 'metadata.labels.x');
});

test('aggregate: one bare, several bracketed, duplicates dropped', () => {
  const a = required(Path.root('a'), '');
  const b = forbidden(Path.root('b'), 'no');
  assert.equal(aggregateMessage([a, a]), 'a: Required value');
  assert.equal(aggregateMessage([a, b]), '[a: Required value, b: Forbidden: no]');
});
