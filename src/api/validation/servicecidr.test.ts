import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { aggregateMessage } from '../field.js';
import { formatAddr, parseAddr, parsePrefix, prefixContains } from '../netip.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

const cidr = (cidrs: unknown, name = 'c') => ({ metadata: { name }, spec: { cidrs } });
const ip = (name: string, parentRef?: unknown) => ({ metadata: { name }, spec: parentRef === undefined ? {} : { parentRef } });
const msg = (errs: ReturnType<typeof validateCreate>) => (errs.length ? aggregateMessage(errs) : '');
const ref = { group: '', resource: 'services', namespace: 'default', name: 'web' };

describe('netip', () => {
  it('parses and prints addresses and prefixes canonically, as Go netip', () => {
    for (const [text, canonical] of [
      ['10.96.0.1', '10.96.0.1'],
      ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
      ['2001:0db8::0001', '2001:db8::1'],
      ['::', '::'],
      ['1:0:0:1:0:0:0:1', '1:0:0:1::1'],
      ['::ffff:a00:1', '::ffff:10.0.0.1'],
    ]) {
      assert.equal(formatAddr(parseAddr(text!)!), canonical, text);
    }
    assert.equal(parseAddr('10.096.0.1'), undefined);
    assert.equal(parsePrefix('10.0.0.0/33'), undefined);
    assert.equal(parsePrefix('10.0.0.0/08'), undefined);
    assert.ok(prefixContains(parsePrefix('10.96.0.0/12')!, parseAddr('10.111.255.254')!));
    assert.ok(!prefixContains(parsePrefix('10.96.0.0/12')!, parseAddr('10.112.0.0')!));
    assert.ok(!prefixContains(parsePrefix('10.96.0.0/12')!, parseAddr('::1')!));
  });
});

describe('ServiceCIDR validation', () => {
  it('one or two canonical CIDRs, one per family', () => {
    const v = (cidrs: unknown) => msg(validateCreate('networking.k8s.io', 'ServiceCIDR', cidr(cidrs)));
    assert.equal(v(['10.96.0.0/12']), '');
    assert.equal(v(['10.96.0.0/12', 'fd00::/108']), '');
    assert.equal(v([]), 'spec.cidrs: Required value: at least one CIDR required');
    assert.equal(v(['10.0.0.0/8', '10.1.0.0/16', 'fd00::/64']), 'spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/8", "10.1.0.0/16", "fd00::/64"}}: may only hold up to 2 values');
    assert.equal(
      v(['10.0.0.0/8', '10.1.0.0/16']),
      'spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string{"10.0.0.0/8", "10.1.0.0/16"}}: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64',
    );
    assert.equal(v(['10.96.0.1/12']), 'spec.cidrs[0]: Invalid value: "10.96.0.1/12": must be in canonical form ("10.96.0.0/12")');
    assert.equal(v(['bad']), 'spec.cidrs[0]: Invalid value: "bad": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)');
    assert.match(msg(validateCreate('networking.k8s.io', 'ServiceCIDR', cidr(['10.0.0.0/8'], 'Not_A_Name'))), /^metadata\.name: Invalid value: "Not_A_Name"/);
  });

  it('cidrs never change; status writes check metadata only', () => {
    const old = cidr(['10.96.0.0/12']);
    assert.equal(msg(validateUpdate('networking.k8s.io', 'ServiceCIDR', cidr(['10.96.0.0/12']), old)), '');
    assert.equal(msg(validateUpdate('networking.k8s.io', 'ServiceCIDR', cidr(['10.97.0.0/16']), old)), 'spec.cidrs: Invalid value: []string{"10.97.0.0/16"}: field is immutable');
    assert.equal(msg(validateStatusUpdate('networking.k8s.io', 'ServiceCIDR', { ...old, status: { conditions: [] } }, old)), '');
  });
});

describe('IPAddress validation', () => {
  it('named by a canonical IP, with a parent reference', () => {
    const v = (name: string, parentRef?: unknown) => msg(validateCreate('networking.k8s.io', 'IPAddress', ip(name, parentRef)));
    assert.equal(v('10.96.0.1', ref), '');
    assert.equal(v('2001:db8::1', ref), '');
    assert.equal(v('2001:db8:0::1', ref), 'metadata.name: Invalid value: "2001:db8:0::1": must be in canonical form ("2001:db8::1")');
    assert.equal(v('10.96.0.01', ref), 'metadata.name: Invalid value: "10.96.0.01": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
    assert.equal(v('10.96.0.1'), 'spec.parentRef: Required value');
    assert.equal(v('10.96.0.1', { group: '', namespace: 'a/b' }), '[spec.parentRef.resource: Required value, spec.parentRef.name: Required value, spec.parentRef.namespace: Invalid value: "a/b": may not contain \'/\']');
    assert.equal(v('10.96.0.1', { ...ref, group: 'Bad_Group' }).startsWith('spec.parentRef.group: Invalid value: "Bad_Group"'), true);
  });

  it('the parent reference never changes', () => {
    const old = ip('10.96.0.1', ref);
    assert.equal(msg(validateUpdate('networking.k8s.io', 'IPAddress', ip('10.96.0.1', ref), old)), '');
    assert.equal(
      msg(validateUpdate('networking.k8s.io', 'IPAddress', ip('10.96.0.1', { ...ref, name: 'other' }), old)),
      'spec.parentRef: Invalid value: &networking.ParentReference{Group:"", Resource:"services", Namespace:"default", Name:"other"}: field is immutable',
    );
  });
});
