import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errFormatWrong, errSuffix, Quantity, quantityError } from './quantity.js';

test('parse then serialize gives upstream canonical form', () => {
  const cases: [string, string, string][] = [
    ['0', '0', 'DecimalSI'],
    ['0n', '0', 'DecimalSI'],
    ['1', '1', 'DecimalSI'],
    ['0.5', '500m', 'DecimalSI'],
    ['.5', '500m', 'DecimalSI'],
    ['1000m', '1', 'DecimalSI'],
    ['1.5', '1500m', 'DecimalSI'],
    ['1000', '1k', 'DecimalSI'],
    ['1024', '1024', 'DecimalSI'],
    ['100m', '100m', 'DecimalSI'],
    ['0.1m', '100u', 'DecimalSI'],
    ['0.1n', '1n', 'DecimalSI'],
    ['128974848', '128974848', 'DecimalSI'],
    ['1Ki', '1Ki', 'BinarySI'],
    ['8Ki', '8Ki', 'BinarySI'],
    ['1024Ki', '1Mi', 'BinarySI'],
    ['1000Mi', '1000Mi', 'BinarySI'],
    ['1.5Gi', '1536Mi', 'BinarySI'],
    ['1.5Ki', '1536', 'BinarySI'],
    ['0.5Ki', '512', 'BinarySI'],
    // Below one, a binary quantity is decimal.
    ['0.0001Ki', '102400u', 'DecimalSI'],
    ['1e3', '1e3', 'DecimalExponent'],
    ['1E3', '1E3', 'DecimalExponent'],
    ['12e-1', '1200e-3', 'DecimalExponent'],
    ['129e6', '129e6', 'DecimalExponent'],
    ['-1', '-1', 'DecimalSI'],
    ['-1500m', '-1500m', 'DecimalSI'],
    ['9223372036854775807Ki', '9223372036854775807', 'BinarySI'],
  ];
  for (const [input, want, format] of cases) {
    const q = Quantity.parse(input);
    assert.equal(q.toString(), want, input);
    assert.equal(q.format, format, input);
  }
});

test('parse errors carry upstream messages', () => {
  const cases: [string, string][] = [
    ['', errFormatWrong],
    ['1x', errFormatWrong],
    ['1.2.3', errFormatWrong],
    ['1e', errSuffix],
    ['1Kii', errSuffix],
    ['1ki', errSuffix],
  ];
  for (const [input, message] of cases) {
    assert.throws(() => Quantity.parse(input), { name: 'QuantityError', message }, input);
    assert.equal(quantityError(input), message);
  }
  assert.throws(() => Quantity.parse(' 1'), { message: errFormatWrong });
  assert.equal(quantityError('1Gi'), undefined);
  assert.equal(quantityError({}), errFormatWrong);
});

test('values round away from zero at the requested scale', () => {
  const cases: [string, bigint, bigint][] = [
    ['1', 1000n, 1n],
    ['100m', 100n, 1n],
    ['1500m', 1500n, 2n],
    ['-1500m', -1500n, -2n],
    ['1n', 1n, 1n],
    ['1Gi', 1073741824000n, 1073741824n],
  ];
  for (const [input, milli, value] of cases) {
    const q = Quantity.parse(input);
    assert.equal(q.milliValue(), milli, input);
    assert.equal(q.value(), value, input);
  }
  assert.equal(Quantity.parse('250m').toNumber(), 0.25);
});

test('compare, add and sub', () => {
  assert.equal(Quantity.parse('1').cmp(Quantity.parse('1000m')), 0);
  assert.equal(Quantity.parse('1Ki').cmp(Quantity.parse('1k')), 1);
  assert.equal(Quantity.parse('999m').cmp(Quantity.parse('1')), -1);
  assert.equal(Quantity.parse('500m').add(Quantity.parse('1.5')).toString(), '2');
  assert.equal(Quantity.parse('1Gi').sub(Quantity.parse('512Mi')).toString(), '512Mi');
  // A zero receiver takes the other's format, as upstream's Add.
  assert.equal(Quantity.fromValue(0).add(Quantity.parse('1Ki')).toString(), '1Ki');
  assert.equal(Quantity.fromMilli(1500).toString(), '1500m');
  assert.equal(Quantity.fromValue(2048, 'BinarySI').toString(), '2Ki');
});

test('from accepts numbers and trims JSON strings; roundUp keeps exact text', () => {
  assert.equal(Quantity.from(0.5).toString(), '500m');
  assert.equal(Quantity.from(' 2 ').toString(), '2');
  assert.equal(Quantity.parse('0.1m').roundUp(-3).toString(), '1m');
  assert.equal(Quantity.parse('1E3').roundUp(-3).toString(), '1E3');
  assert.equal(JSON.stringify({ cpu: Quantity.parse('0.25') }), '{"cpu":"250m"}');
});
