import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Question } from 'dns-packet';
import { Resolver, addressFromReverse, fallthrough, type Resolution } from './resolver.js';
import { StaticClusterView, fixtureCluster } from './testing.js';

const resolver = new Resolver({ view: fixtureCluster(), localAddresses: ['10.217.0.1'] });

function ask(name: string, type: Question['type'], r = resolver): Resolution {
  const out = r.resolve({ name, type, class: 'IN' });
  assert.notEqual(out, fallthrough, `${name} ${type} fell through`);
  return out as Resolution;
}

/** The answer section as `name type data` lines. */
const lines = (rs: Resolution['answers']) => rs.map((a) => `${a.name} ${a.type} ${'data' in a ? (typeof a.data === 'object' ? JSON.stringify(a.data) : String(a.data)) : ''}`);

const soa = {
  mname: 'ns.dns.cluster.local',
  rname: 'hostmaster.cluster.local',
  serial: 1764633600,
  refresh: 7200,
  retry: 1800,
  expire: 86400,
  minimum: 5,
};

describe('cluster DNS resolver (CoreDNS kubernetes plugin records)', () => {
  it('answers a ClusterIP Service with its address, TTL 5, authoritative', () => {
    const r = ask('myservice.default.svc.cluster.local', 'A');
    assert.equal(r.rcode, 'NOERROR');
    assert.equal(r.authoritative, true);
    assert.deepEqual(r.answers, [{ name: 'myservice.default.svc.cluster.local', type: 'A', class: 'IN', ttl: 5, data: '10.96.0.20' }]);
  });

  it('matches names case-insensitively and answers in the query case', () => {
    const r = ask('MyService.Default.SVC.Cluster.Local', 'A');
    assert.deepEqual(lines(r.answers), ['MyService.Default.SVC.Cluster.Local A 10.96.0.20']);
  });

  it('answers AAAA of an IPv4 Service with NODATA and the SOA', () => {
    const r = ask('myservice.default.svc.cluster.local', 'AAAA');
    assert.equal(r.rcode, 'NOERROR');
    assert.deepEqual(r.answers, []);
    assert.deepEqual(r.authorities, [{ name: 'cluster.local', type: 'SOA', class: 'IN', ttl: 5, data: soa }]);
  });

  it('serves both families of a dual-stack Service', () => {
    assert.deepEqual(lines(ask('dual.web.svc.cluster.local', 'A').answers), ['dual.web.svc.cluster.local A 10.96.0.30']);
    assert.deepEqual(lines(ask('dual.web.svc.cluster.local', 'AAAA').answers), ['dual.web.svc.cluster.local AAAA fd00:10:96::30']);
  });

  it('answers a headless Service with its ready endpoints', () => {
    assert.deepEqual(lines(ask('headless.web.svc.cluster.local', 'A').answers), ['headless.web.svc.cluster.local A 10.217.0.5', 'headless.web.svc.cluster.local A 10.217.0.6']);
  });

  it('includes not-ready endpoints with publishNotReadyAddresses', () => {
    assert.deepEqual(lines(ask('notready.web.svc.cluster.local', 'A').answers), ['notready.web.svc.cluster.local A 10.217.0.9']);
  });

  it('answers a headless Service without endpoints NXDOMAIN, as CoreDNS', () => {
    assert.equal(ask('empty-headless.web.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  });

  it('names endpoints by hostname, else by dashed address; not-ready ones are absent', () => {
    assert.deepEqual(lines(ask('web-0.headless.web.svc.cluster.local', 'A').answers), ['web-0.headless.web.svc.cluster.local A 10.217.0.5']);
    assert.deepEqual(lines(ask('10-217-0-6.headless.web.svc.cluster.local', 'A').answers), ['10-217-0-6.headless.web.svc.cluster.local A 10.217.0.6']);
    assert.equal(ask('10-217-0-7.headless.web.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  });

  it('answers SRV of a ClusterIP Service with the Service as target and its address as additional', () => {
    const r = ask('_http._tcp.myservice.default.svc.cluster.local', 'SRV');
    assert.deepEqual(lines(r.answers), ['_http._tcp.myservice.default.svc.cluster.local SRV {"priority":0,"weight":100,"port":80,"target":"myservice.default.svc.cluster.local"}']);
    assert.deepEqual(lines(r.additionals), ['myservice.default.svc.cluster.local A 10.96.0.20']);
    assert.equal(ask('_https._tcp.myservice.default.svc.cluster.local', 'SRV').rcode, 'NXDOMAIN');
    assert.equal(ask('_http._udp.myservice.default.svc.cluster.local', 'SRV').rcode, 'NXDOMAIN');
  });

  it('answers SRV of a headless Service per endpoint, weight shared out', () => {
    const r = ask('_http._tcp.headless.web.svc.cluster.local', 'SRV');
    assert.deepEqual(lines(r.answers), [
      '_http._tcp.headless.web.svc.cluster.local SRV {"priority":0,"weight":50,"port":8080,"target":"web-0.headless.web.svc.cluster.local"}',
      '_http._tcp.headless.web.svc.cluster.local SRV {"priority":0,"weight":50,"port":8080,"target":"10-217-0-6.headless.web.svc.cluster.local"}',
    ]);
    assert.deepEqual(lines(r.additionals), ['web-0.headless.web.svc.cluster.local A 10.217.0.5', '10-217-0-6.headless.web.svc.cluster.local A 10.217.0.6']);
  });

  it('answers SRV of the Service name itself for every port', () => {
    const r = ask('dual.web.svc.cluster.local', 'SRV');
    assert.deepEqual(
      r.answers.map((a) => (a.type === 'SRV' ? a.data.port : 0)),
      [80, 9090],
    );
    assert.deepEqual(lines(r.additionals), ['dual.web.svc.cluster.local A 10.96.0.30', 'dual.web.svc.cluster.local AAAA fd00:10:96::30']);
  });

  it('answers pod names in existing namespaces (pods insecure)', () => {
    assert.deepEqual(lines(ask('10-217-0-42.default.pod.cluster.local', 'A').answers), ['10-217-0-42.default.pod.cluster.local A 10.217.0.42']);
    assert.equal(ask('10-217-0-42.nowhere.pod.cluster.local', 'A').rcode, 'NXDOMAIN');
    assert.equal(ask('not-an-ip.default.pod.cluster.local', 'A').rcode, 'NXDOMAIN');
    assert.equal(ask('10-217-0-42.default.pod.cluster.local', 'AAAA').rcode, 'NOERROR');
  });

  it('answers PTR for ClusterIPs and endpoint addresses; other reverse names fall through', () => {
    assert.deepEqual(lines(ask('20.0.96.10.in-addr.arpa', 'PTR').answers), ['20.0.96.10.in-addr.arpa PTR myservice.default.svc.cluster.local']);
    assert.deepEqual(lines(ask('5.0.217.10.in-addr.arpa', 'PTR').answers), ['5.0.217.10.in-addr.arpa PTR web-0.headless.web.svc.cluster.local']);
    assert.deepEqual(lines(ask('8.0.217.10.in-addr.arpa', 'PTR').answers), ['8.0.217.10.in-addr.arpa PTR 10-217-0-8.myservice.default.svc.cluster.local']);
    assert.equal(resolver.resolve({ name: '7.0.217.10.in-addr.arpa', type: 'PTR' }), fallthrough);
    assert.equal(resolver.resolve({ name: '1.1.168.192.in-addr.arpa', type: 'PTR' }), fallthrough);
    assert.equal(resolver.resolve({ name: '20.0.96.10.in-addr.arpa', type: 'A' }), fallthrough);
  });

  it('reads IPv6 reverse names', () => {
    assert.equal(addressFromReverse('0.3.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.6.9.0.0.0.1.0.0.0.0.d.f.ip6.arpa'), 'fd00:10:96::30');
    assert.equal(addressFromReverse('1.2.in-addr.arpa'), undefined);
  });

  it('answers an ExternalName Service with a CNAME, followed inside the zone', () => {
    assert.deepEqual(lines(ask('external.default.svc.cluster.local', 'A').answers), ['external.default.svc.cluster.local CNAME example.com']);
    assert.deepEqual(lines(ask('external.default.svc.cluster.local', 'CNAME').answers), ['external.default.svc.cluster.local CNAME example.com']);
    assert.deepEqual(lines(ask('alias.default.svc.cluster.local', 'A').answers), [
      'alias.default.svc.cluster.local CNAME myservice.default.svc.cluster.local',
      'myservice.default.svc.cluster.local A 10.96.0.20',
    ]);
    assert.equal(ask('_http._tcp.external.default.svc.cluster.local', 'SRV').rcode, 'NXDOMAIN');
    // The target outside the zone is left for an upstream to resolve.
    assert.equal(ask('external.default.svc.cluster.local', 'A').chase, 'example.com');
    assert.equal(ask('alias.default.svc.cluster.local', 'A').chase, undefined);
  });

  it('answers absent names NXDOMAIN with the SOA, as for busybox search domains', () => {
    for (const name of ['myservice.svc.cluster.local', 'myservice.cluster.local', 'nothere.default.svc.cluster.local', 'a.b.c.d.myservice.default.svc.cluster.local']) {
      const r = ask(name, 'A');
      assert.equal(r.rcode, 'NXDOMAIN', name);
      assert.deepEqual(r.authorities, [{ name: 'cluster.local', type: 'SOA', class: 'IN', ttl: 5, data: soa }], name);
    }
  });

  it('answers names that exist without records NODATA', () => {
    for (const name of ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'default.pod.cluster.local']) {
      const r = ask(name, 'A');
      assert.equal(r.rcode, 'NOERROR', name);
      assert.deepEqual(r.answers, [], name);
      assert.equal(r.authorities[0]?.type, 'SOA', name);
    }
    assert.equal(ask('myservice.default.svc.cluster.local', 'MX').rcode, 'NOERROR');
    assert.equal(ask('nothere.default.svc.cluster.local', 'MX').rcode, 'NXDOMAIN');
  });

  it('answers the apex SOA and NS (the kube-dns Service) and ns.dns', () => {
    assert.deepEqual(ask('cluster.local', 'SOA').answers, [{ name: 'cluster.local', type: 'SOA', class: 'IN', ttl: 5, data: soa }]);
    const ns = ask('cluster.local', 'NS');
    assert.deepEqual(lines(ns.answers), ['cluster.local NS kube-dns.kube-system.svc.cluster.local']);
    assert.deepEqual(lines(ns.additionals), ['kube-dns.kube-system.svc.cluster.local A 10.96.0.10']);
    assert.deepEqual(lines(ask('ns.dns.cluster.local', 'A').answers), ['ns.dns.cluster.local A 10.96.0.10']);
  });

  it('serves the schema version as TXT', () => {
    assert.deepEqual(lines(ask('dns-version.cluster.local', 'TXT').answers), ['dns-version.cluster.local TXT 1.1.0']);
    const [txt] = ask('dns-version.cluster.local', 'TXT').answers;
    assert.equal(txt?.type === 'TXT' ? txt.ttl : undefined, 28800);
    assert.equal(ask('myservice.default.svc.cluster.local', 'TXT').rcode, 'NOERROR');
    assert.equal(ask('nothere.default.svc.cluster.local', 'TXT').rcode, 'NXDOMAIN');
  });

  it('lets names outside the zone fall through and refuses zone transfers', () => {
    assert.equal(resolver.resolve({ name: 'example.com', type: 'A' }), fallthrough);
    assert.equal(resolver.resolve({ name: 'cluster.localhost', type: 'A' }), fallthrough);
    assert.equal(ask('cluster.local', 'AXFR').rcode, 'REFUSED');
  });

  it('answers absent names SERVFAIL until the caches have synced', () => {
    const r = new Resolver({ view: new StaticClusterView(fixtureCluster().objects, false), localAddresses: ['10.217.0.1'] });
    assert.equal(ask('nothere.default.svc.cluster.local', 'A', r).rcode, 'SERVFAIL');
    assert.equal(ask('myservice.default.svc.cluster.local', 'A', r).rcode, 'NOERROR');
  });

  it('serves another cluster domain', () => {
    const r = new Resolver({ view: fixtureCluster(), domain: 'kite.internal', localAddresses: ['10.217.0.1'] });
    assert.deepEqual(lines(ask('myservice.default.svc.kite.internal', 'A', r).answers), ['myservice.default.svc.kite.internal A 10.96.0.20']);
    assert.equal(r.resolve({ name: 'myservice.default.svc.cluster.local', type: 'A' }), fallthrough);
  });
});
