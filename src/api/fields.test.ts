import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from './errors.js';
import { checkFieldLabels, escapeValue, fieldSelectorFromSet, parseFieldSelector, unescapeValue } from './fields.js';

void test('parse and render', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['a=b', 'a=b'],
    ['a==b', 'a=b'],
    ['b!=c,a=b', 'a=b,b!=c'],
    ['a=x\\,y', 'a=x\\,y'],
    ['a=x\\=y\\\\', 'a=x\\=y\\\\'],
    [',a=b,', 'a=b'],
    ['spec.nodeName=', 'spec.nodeName='],
  ];
  for (const [input, want] of cases) assert.equal(parseFieldSelector(input).toString(), want, input);
  assert.deepEqual(parseFieldSelector('a=x\\,y').requirements, [{ field: 'a', operator: '=', value: 'x,y' }]);
});

void test('parse errors', () => {
  const cases: [string, string][] = [
    ['a', "invalid selector: 'a'; can't understand 'a'"],
    ['x=1,b', "invalid selector: 'x=1,b'; can't understand 'b'"],
    ['a=b=c', 'invalid field selector: unescaped character in value: 61'],
    ['a=b\\n', 'invalid field selector: invalid escape sequence: \\n'],
    ['a=b\\', 'invalid field selector: invalid escape sequence: \\'],
  ];
  for (const [input, message] of cases) assert.throws(() => parseFieldSelector(input), { message }, input);
});

void test('matching treats a missing field as empty', () => {
  const fields = { 'metadata.name': 'web', 'spec.nodeName': '' };
  const cases: [string, boolean][] = [
    ['', true],
    ['metadata.name=web', true],
    ['metadata.name!=web', false],
    ['spec.nodeName=', true],
    ['spec.nodeName!=', false],
    ['status.phase!=Running', true],
    ['status.phase=', true],
    ['metadata.name=web,status.phase=Running', false],
  ];
  for (const [sel, want] of cases) assert.equal(parseFieldSelector(sel).matches(fields), want, sel);
});

void test('introspection', () => {
  const s = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed,spec.nodeName!=n2');
  assert.equal(s.requiresExactMatch('spec.nodeName'), 'n1');
  assert.equal(s.requiresExactMatch('status.phase'), undefined);
  assert.deepEqual(s.fieldsUsed(), ['spec.nodeName', 'status.phase']);
  assert.equal(fieldSelectorFromSet({ b: '1', a: 'x,y' }).toString(), 'a=x\\,y,b=1');
  assert.equal(unescapeValue(escapeValue('a\\b,c=d')), 'a\\b,c=d');
});

void test('checkFieldLabels rejects unsupported labels with 400', () => {
  const allowed = ['metadata.name', 'metadata.namespace', 'spec.nodeName'];
  checkFieldLabels(parseFieldSelector('spec.nodeName=n,metadata.name!=x'), allowed);
  assert.throws(
    () => checkFieldLabels(parseFieldSelector('spec.nodeName=n,foo=bar'), allowed),
    (e: unknown) => e instanceof StatusError && e.code === 400 && e.reason === 'BadRequest' && e.message === 'field label not supported: foo',
  );
});
