import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configMapKeyErrors, dns1123LabelErrors, envVarNameErrors, isCIDR, isIP, isIPv4, isIPv6, nameIsDNSSubdomain, portNameErrors } from './names.js';

test('IP and CIDR parsing as Go net.ParseIP / ParseCIDR', () => {
  const cases: [string, boolean, boolean][] = [
    ['10.0.0.1', true, false],
    ['255.255.255.255', true, false],
    ['256.0.0.1', false, false],
    ['01.2.3.4', false, false],
    ['::1', false, true],
    ['2001:db8::ffff', false, true],
    ['::ffff:10.0.0.1', false, true],
    ['1:2:3:4:5:6:7:8', false, true],
    ['1:2:3:4:5:6:7:8:9', false, false],
    ['1::2::3', false, false],
    ['fe80::1%eth0', false, false],
    ['', false, false],
  ];
  for (const [ip, v4, v6] of cases) {
    assert.equal(isIPv4(ip), v4, ip);
    assert.equal(isIPv6(ip), v6, ip);
    assert.equal(isIP(ip), v4 || v6, ip);
  }
  assert.equal(isCIDR('10.244.0.0/16'), true);
  assert.equal(isCIDR('10.244.0.0/33'), false);
  assert.equal(isCIDR('fd00::/64'), true);
  assert.equal(isCIDR('10.244.0.0'), false);
});

test('string formats with upstream messages', () => {
  assert.deepEqual(portNameErrors('http'), []);
  assert.deepEqual(portNameErrors('-web--1234567890x'), [
    'must be no more than 15 characters',
    'must not contain consecutive hyphens',
    'must not begin or end with a hyphen',
  ]);
  assert.deepEqual(portNameErrors('8080'), ['must contain at least one letter (a-z)']);
  assert.deepEqual(envVarNameErrors('1_OK-name.x'), []);
  assert.deepEqual(envVarNameErrors(''), ['environment variable name must be non-empty']);
  assert.deepEqual(configMapKeyErrors('..a'), ["must not start with '..'"]);
  assert.deepEqual(dns1123LabelErrors('a.b'), ['must not contain dots']);
  assert.deepEqual(dns1123LabelErrors('a'.repeat(64)), ['must be no more than 63 characters']);
  // A generateName may end with '-'.
  assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
  assert.equal(nameIsDNSSubdomain('web-', false).length, 1);
});
