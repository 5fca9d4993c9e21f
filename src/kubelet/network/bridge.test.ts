import assert from 'node:assert/strict';
import test from 'node:test';
import { gatewayOf } from './bridge.js';

test('the gateway is the subnet’s first host address, whatever address the CIDR was written with', () => {
  assert.equal(gatewayOf('10.217.0.0/24'), '10.217.0.1');
  assert.equal(gatewayOf('10.217.3.77/24'), '10.217.3.1');
  assert.equal(gatewayOf('10.200.0.0/16'), '10.200.0.1');
  assert.equal(gatewayOf('192.168.5.128/25'), '192.168.5.129');
});
