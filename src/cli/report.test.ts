import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureText } from './report.js';

test('user errors are one line; bugs keep their stack', () => {
  const enoent = Object.assign(new Error("ENOENT: no such file or directory, open 'nodes.yaml'"), { code: 'ENOENT' });
  const badPort = Object.assign(new RangeError('options.port should be >= 0 and < 65536. Received 99999.'), { code: 'ERR_SOCKET_BAD_PORT' });
  const cases: [unknown, string][] = [
    [new Error('--nodes is required'), 'error: --nodes is required\n'],
    [enoent, "error: ENOENT: no such file or directory, open 'nodes.yaml'\n"],
    [badPort, 'error: options.port should be >= 0 and < 65536. Received 99999.\n'],
    [new SyntaxError('Unexpected token } in JSON at position 3'), 'error: Unexpected token } in JSON at position 3\n'],
    [new Error('Nested mappings are not allowed at line 1, column 4:\n\na: b: c\n   ^\n'), 'error: Nested mappings are not allowed at line 1, column 4:\n'],
    ['a thrown string', 'error: a thrown string\n'],
  ];
  for (const [err, want] of cases) assert.equal(failureText(err), want);
  const bug = failureText(new TypeError("Cannot read properties of undefined (reading 'name')"));
  assert.match(bug, /^error: TypeError: Cannot read properties of undefined \(reading 'name'\)\n {4}at /);
});
