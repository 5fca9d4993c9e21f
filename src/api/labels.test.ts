import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  everything,
  isNothing,
  labelSelectorAsSelector,
  newRequirement,
  nothing,
  parseLabelSelector,
  selectorFromSet,
  selectorOf,
} from './labels.js';

const nameRegexMsg =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

void test('parse renders the canonical string (sorted by key, values sorted)', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['  y = b , x=a', 'x=a,y=b'],
    ['x in (b,a,b)', 'x in (a,b)'],
    ['x notin (a)', 'x notin (a)'],
    ['x', 'x'],
    ['!x', '!x'],
    ['x>1,y<2', 'x>1,y<2'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['x=', 'x='],
    ['in in (in, notin)', 'in in (in,notin)'],
    ['example.com/app=web', 'example.com/app=web'],
    ['constructor=toString', 'constructor=toString'],
  ];
  for (const [input, want] of cases) assert.equal(parseLabelSelector(input).toString(), want, input);
});

void test('parse errors carry upstream wording', () => {
  const cases: [string, string][] = [
    ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
    ['x=a,', "found '', expected: identifier after ','"],
    [',x', "found ',', expected: !, identifier, or 'end of string'"],
    ['x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['x=a b', "found 'b', expected: ',' or 'end of string'"],
    ['!', "unable to parse requirement: found '', expected: identifier"],
    ['x>a', `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`],
    ['-x=a', `unable to parse requirement: <nil>: Invalid value: "-x": name part ${nameRegexMsg}`],
    ['a/b/c', `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name ${nameRegexMsg} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`],
    [
      'x=-a',
      "unable to parse requirement: values[0][x]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ],
    ['x=>a', "unable to parse requirement: found '>', expected: identifier"],
    ['x=~a', `unable to parse requirement: values[0][x]: Invalid value: "~a": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`],
  ];
  for (const [input, message] of cases) assert.throws(() => parseLabelSelector(input), { message }, input);
});

void test('matching', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (db,web)', true],
    ['app notin (web)', false],
    ['missing notin (web)', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['n>4', true],
    ['n>5', false],
    ['n<6', true],
    ['app>1', false],
    ['missing<1', false],
    ['app=web,tier=back', false],
  ];
  for (const [sel, want] of cases) assert.equal(parseLabelSelector(sel).matches(labels), want, sel);
  assert.equal(parseLabelSelector('!x').matches(undefined), true);
});

void test('everything and nothing', () => {
  assert.equal(everything().empty(), true);
  assert.equal(everything().matches({ a: 'b' }), true);
  assert.equal(nothing().empty(), false);
  assert.equal(nothing().matches({}), false);
  assert.equal(nothing().requirements(), undefined);
  assert.equal(parseLabelSelector('').empty(), true);
});

void test('labelSelectorAsSelector', () => {
  assert.ok(isNothing(labelSelectorAsSelector(undefined)));
  assert.equal(labelSelectorAsSelector({}).empty(), true);
  const s = labelSelectorAsSelector({
    matchLabels: { b: '2', a: '1' },
    matchExpressions: [
      { key: 'c', operator: 'In', values: ['y', 'x'] },
      { key: 'd', operator: 'DoesNotExist' },
      { key: 'e', operator: 'Exists' },
      { key: 'f', operator: 'NotIn', values: ['z'] },
    ],
  });
  assert.equal(s.toString(), 'a=1,b=2,c in (x,y),!d,e,f notin (z)');
  assert.equal(s.matches({ a: '1', b: '2', c: 'x', e: '' }), true);
  assert.equal(s.matches({ a: '1', b: '2', c: 'x', e: '', d: '' }), false);
  assert.equal(s.requiresExactMatch('a'), '1');
  assert.equal(s.requiresExactMatch('f'), undefined);

  const errors: [Parameters<typeof labelSelectorAsSelector>[0], string][] = [
    [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, '"Gt" is not a valid label selector operator'],
    [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"],
    [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist'],
    [{ matchLabels: { '': 'x' } }, 'key: Invalid value: "": name part must be non-empty; name part ' + nameRegexMsg],
  ];
  for (const [input, message] of errors) assert.throws(() => labelSelectorAsSelector(input), { message });
});

void test('newRequirement aggregates several errors', () => {
  assert.throws(() => newRequirement('a', 'gt', ['x', 'y']), {
    message:
      "[values: Invalid value: []string{\"x\", \"y\"}: for 'Gt', 'Lt' operators, exactly one value is required, values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer, values[1]: Invalid value: \"y\": for 'Gt', 'Lt' operators, the value must be an integer]",
  });
});

void test('selectorFromSet', () => {
  assert.equal(selectorFromSet({ b: '2', a: '1' }).toString(), 'a=1,b=2');
  assert.equal(selectorFromSet({}).empty(), true);
  assert.equal(selectorFromSet({ a: '1' }).matches({ a: '2' }), false);
});

void test('matching sees only own labels, never Object.prototype', () => {
  // Built from requirements: the string parser is not the subject here.
  const exists = selectorOf([newRequirement('constructor', 'exists', [])]);
  assert.equal(exists.matches({}), false);
  assert.equal(exists.matches({ constructor: 'x' }), true);
  assert.equal(selectorOf([newRequirement('toString', '!', [])]).matches({ a: 'b' }), true);
  assert.equal(parseLabelSelector('a!=b').matches(undefined), true);
  assert.equal(parseLabelSelector('a=b').matches(undefined), false);
});
