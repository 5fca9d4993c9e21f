import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { applyDefaults } from '../defaults/index.js';
import { validateCreate, validateUpdate } from './index.js';
import { parsePrefixSloppy, prefixContains } from '../netip.js';

type Obj = Record<string, any>;

const np = (spec: Obj, name = 'deny'): Obj => ({ metadata: { name, namespace: 'default' }, spec: { podSelector: {}, ...spec } });
const create = (o: Obj) => validateCreate('networking.k8s.io', 'NetworkPolicy', o).map(fieldErrorMessage);
const ingressPort = (port: Obj) => np({ ingress: [{ ports: [port] }] });
const ingressPeer = (peer: Obj) => np({ ingress: [{ from: [peer] }] });

void test('NetworkPolicy ports: protocol, numeric and named port, endPort rules', () => {
  const cases: { name: string; port: Obj; want: string[] }[] = [
    { name: 'numeric with endPort', port: { protocol: 'TCP', port: 8000, endPort: 8080 }, want: [] },
    { name: 'named', port: { protocol: 'UDP', port: 'dns' }, want: [] },
    { name: 'protocol only', port: { protocol: 'SCTP' }, want: [] },
    { name: 'bad protocol', port: { protocol: 'ICMP', port: 1 }, want: ['spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"'] },
    { name: 'port zero', port: { port: 0 }, want: ['spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive'] },
    { name: 'endPort below port', port: { port: 9000, endPort: 8000 }, want: ['spec.ingress[0].ports[0].endPort: Invalid value: 8000: must be greater than or equal to `port`'] },
    {
      name: 'endPort out of range',
      port: { port: 80, endPort: 70000 },
      want: ['spec.ingress[0].ports[0].endPort: Invalid value: 70000: must be between 1 and 65535, inclusive'],
    },
    {
      name: 'endPort with a named port',
      port: { port: 'http', endPort: 90 },
      want: ['spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric'],
    },
    { name: 'endPort without port', port: { endPort: 90 }, want: ['spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is not specified'] },
    { name: 'bad port name', port: { port: '80' }, want: ['spec.ingress[0].ports[0].port: Invalid value: "80": must contain at least one letter (a-z)'] },
  ];
  for (const c of cases) assert.deepEqual(create(ingressPort(c.port)), c.want, c.name);
});

void test('NetworkPolicy peers: one kind each, ipBlock alone, CIDRs and strict-subset excepts', () => {
  const cases: { name: string; peer: Obj; want: string[] }[] = [
    { name: 'pods in namespaces', peer: { podSelector: { matchLabels: { app: 'c' } }, namespaceSelector: {} }, want: [] },
    { name: 'ipBlock with except', peer: { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }, want: [] },
    { name: 'leading zeros are legacy-valid', peer: { ipBlock: { cidr: '010.0.0.0/8' } }, want: [] },
    { name: 'IPv6', peer: { ipBlock: { cidr: 'fd00::/64', except: ['fd00::1:0/112'] } }, want: [] },
    { name: 'empty peer', peer: {}, want: ['spec.ingress[0].from[0]: Required value: must specify a peer'] },
    {
      name: 'ipBlock and a selector',
      peer: { podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } },
      want: ['spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer'],
    },
    { name: 'cidr missing', peer: { ipBlock: { except: ['10.0.0.0/8'] } }, want: ['spec.ingress[0].from[0].ipBlock.cidr: Required value'] },
    {
      name: 'cidr invalid',
      peer: { ipBlock: { cidr: '10.0.0.0' } },
      want: ['spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'],
    },
    {
      name: 'except outside',
      peer: { ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24', '10.0.0.0/16', '10.0.0.0/8', 'x'] } },
      want: [
        'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
        'spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "10.0.0.0/16": must be a strict subset of `cidr`',
        'spec.ingress[0].from[0].ipBlock.except[2]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
        'spec.ingress[0].from[0].ipBlock.except[3]: Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
      ],
    },
    {
      name: 'bad selector',
      peer: { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] } },
      want: ["spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"],
    },
  ];
  for (const c of cases) assert.deepEqual(create(ingressPeer(c.peer)), c.want, c.name);
  // Egress peers are checked the same way, at their own path.
  assert.deepEqual(create(np({ egress: [{ to: [{}] }] })), ['spec.egress[0].to[0]: Required value: must specify a peer']);
});

void test('NetworkPolicy podSelector, policyTypes and name', () => {
  assert.deepEqual(create(np({ policyTypes: ['Ingress', 'Egress'] })), []);
  assert.deepEqual(create(np({ policyTypes: ['Ingres'] })), ['spec.policyTypes[0]: Unsupported value: "Ingres": supported values: "Ingress", "Egress"']);
  assert.deepEqual(create(np({ policyTypes: ['Ingress', 'Egress', 'Ingress'] })), [
    'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
  ]);
  assert.deepEqual(create(np({ podSelector: { matchLabels: { app: 'bad value!' } } })), [
    "spec.podSelector.matchLabels: Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
  ]);
  assert.deepEqual(create(np({}, 'Deny')).length, 1);
});

void test('NetworkPolicy update: a CIDR the stored policy had stays acceptable, new ones are checked', () => {
  const old = ingressPeer({ ipBlock: { cidr: '10.0.0.0/33' } });
  old.metadata.resourceVersion = '5';
  const same = structuredClone(old);
  same.spec.ingress.push({ ports: [{ port: 80 }] });
  assert.deepEqual(validateUpdate('networking.k8s.io', 'NetworkPolicy', same, old).map(fieldErrorMessage), []);
  const changed = ingressPeer({ ipBlock: { cidr: '10.0.0.0/34' } });
  changed.metadata.resourceVersion = '5';
  assert.deepEqual(validateUpdate('networking.k8s.io', 'NetworkPolicy', changed, old).map(fieldErrorMessage), [
    'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/34": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
  ]);
});

void test('NetworkPolicy defaults: policyTypes from the rules, TCP ports, empty podSelector', () => {
  const cases: { name: string; spec: Obj | undefined; want: Obj }[] = [
    { name: 'no spec', spec: undefined, want: { podSelector: {}, policyTypes: ['Ingress'] } },
    { name: 'egress rules', spec: { egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 80 }] }] }, want: { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'UDP' }, { port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] } },
    { name: 'empty egress list', spec: { egress: [], ingress: [{ ports: [{ port: 'http' }] }] }, want: { podSelector: {}, egress: [], ingress: [{ ports: [{ port: 'http', protocol: 'TCP' }] }], policyTypes: ['Ingress'] } },
    { name: 'types given', spec: { podSelector: { matchLabels: { a: 'b' } }, policyTypes: ['Egress'] }, want: { podSelector: { matchLabels: { a: 'b' } }, policyTypes: ['Egress'] } },
  ];
  for (const c of cases) {
    const obj: Obj = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'p' }, ...(c.spec ? { spec: c.spec } : {}) };
    applyDefaults('networking.k8s.io', 'NetworkPolicy', obj);
    assert.deepEqual(obj.spec, c.want, c.name);
  }
});

void test('sloppy CIDR parsing and containment', () => {
  assert.deepEqual(parsePrefixSloppy('010.1.0.0/016'), { addr: { family: 'IPv4', value: 0x0a010000n }, bits: 16 });
  assert.equal(parsePrefixSloppy('256.0.0.0/8'), undefined);
  assert.equal(parsePrefixSloppy('::ffff:10.0.0.1/128')?.addr.value, 0xffff0a000001n);
  assert.equal(parsePrefixSloppy('1:2:3:4:5:6:7:8/64')?.addr.value, 0x00010002000300040005000600070008n);
  assert.equal(prefixContains(parsePrefixSloppy('10.0.0.0/8')!, parsePrefixSloppy('10.255.0.0/16')!.addr), true);
  assert.equal(prefixContains(parsePrefixSloppy('10.0.0.0/8')!, parsePrefixSloppy('11.0.0.0/16')!.addr), false);
  assert.equal(prefixContains(parsePrefixSloppy('10.0.0.0/8')!, parsePrefixSloppy('::/0')!.addr), false);
});
