import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile, CompileError, evaluate, largestCollection, toCel } from './cel.js';

const run = (expression: string, object: unknown = {}) => {
  const inputs = { object: toCel(object), oldObject: null, params: null, request: null, namespaceObject: null, variables: {} };
  return evaluate(compile(expression), inputs, largestCollection(inputs));
};

test('JSON integers are CEL ints, other numbers doubles', () => {
  assert.equal(run('object.a + 1 == 3', { a: 2 }), true);
  assert.equal(run('type(object.a) == int', { a: 2 }), true);
  assert.equal(run('type(object.b) == double', { b: 2.5 }), true);
});

test('macros, has() and optionals', () => {
  const obj = { items: [{ name: 'a' }, { name: 'b' }] };
  assert.equal(run('object.items.all(i, i.name.size() == 1)', obj), true);
  assert.equal(run('object.items.exists_one(i, i.name == "b")', obj), true);
  assert.deepEqual(run('object.items.map(i, i.name)', obj), ['a', 'b']);
  assert.equal(run('object.items.filter(i, i.name == "z").size()', obj), 0n);
  assert.equal(run('has(object.spec)', obj), false);
  assert.equal(run('object.?spec.?replicas.orValue(1)', obj), 1n);
});

test('Kubernetes library functions', () => {
  assert.equal(run('[1, 2, 3].isSorted() && ![2, 1].isSorted()'), true);
  assert.equal(run('[1, 2, 3].sum()'), 6n);
  assert.equal(run('[3, 1, 2].min()'), 1n);
  assert.equal(run('[3, 1, 2].max()'), 3n);
  assert.equal(run('[1, 2, 1].indexOf(1)'), 0n);
  assert.equal(run('[1, 2, 1].lastIndexOf(1)'), 2n);
  assert.equal(run('"ABC".lowerAscii() == "abc" && "a,b".split(",").join("-") == "a-b" && "abc".matches("^a")'), true);
  assert.equal(run('isQuantity("100Mi") && !isQuantity("1x1")'), true);
  assert.equal(run('quantity("1Gi").isGreaterThan(quantity("100Mi"))'), true);
  assert.equal(run('quantity("500m").compareTo(quantity("1"))'), -1n);
  assert.equal(run('quantity("2k").asInteger()'), 2000n);
  assert.equal(run('quantity("500m").isInteger()'), false);
});

test('compile errors are refused with upstream prefix', () => {
  assert.throws(() => compile('object.spec.replicas <='), (err: Error) => err instanceof CompileError && err.message.startsWith('compilation failed: ERROR: <input>: '));
  assert.throws(() => compile('unknownVar > 1'), CompileError);
  assert.throws(() => compile('1 + "a"'), CompileError);
});

test('objects from requests reach no prototype', () => {
  const obj = JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}');
  const cel = toCel(obj) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(cel), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(run('has(object.constructor)', obj), false);
});

test('regular expressions that could backtrack without bound are refused at compile time', () => {
  for (const pattern of ['^(a+)+$', '(x*)*y', '([a-z]+){2,}', '(a)\\\\1', '(?=a)b']) {
    assert.throws(() => compile(`object.name.matches("${pattern}")`), (err: Error) => err instanceof CompileError && err.message.includes('error parsing regexp'), pattern);
  }
  for (const pattern of ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', '(ab)+', '[(+]*', 'a{2,5}', '^(\\\\d+)\\\\.(\\\\d+)$']) {
    assert.doesNotThrow(() => compile(`object.name.matches("${pattern}")`), pattern);
  }
  assert.equal(run('object.name.matches("^[a-z]+(-[a-z]+)*$")', { name: 'my-app' }), true);
});

test('ip and cidr library', () => {
  assert.equal(run('isIP("10.0.0.1") && !isIP("10.0.0.300") && isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0/33")'), true);
  assert.equal(run('ip("fd00::1").family()'), 6n);
  assert.equal(run('cidr("10.0.0.0/8").containsIP("10.1.2.3") && !cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))'), true);
  assert.equal(run('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && cidr("10.0.0.0/8").prefixLength() == 8'), true);
  assert.equal(run('string(cidr("10.1.2.3/8").masked())'), '10.0.0.0/8');
  assert.throws(() => run('ip("nope")'), /parse error/);
});
