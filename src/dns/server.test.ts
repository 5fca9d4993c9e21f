// The DNS server on 127.0.0.1 (a random port) as clients see it: Debian's dig and nslookup, and
// busybox 1.35's nslookup with a pod's search list.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resolver, fallthrough } from './resolver.js';
import { DnsServer, parseUpstream } from './server.js';
import { fixtureCluster, service, slice } from './testing.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const bigCount = 120;
const cluster = fixtureCluster();
cluster.objects.services.push(service('web', 'big', { type: 'ClusterIP', clusterIP: 'None', ports: [{ name: 'http', port: 80 }] }));
cluster.objects.services.push(service('default', 'ext-test', { type: 'ExternalName', externalName: 'example.test' }));
cluster.objects.slices.push(
  slice('web', 'big', 'big-1', {
    endpoints: Array.from({ length: bigCount }, (_, i) => ({ addresses: [`10.217.1.${i + 1}`], conditions: { ready: true } })),
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
  }),
);

describe('cluster DNS server on loopback', () => {
  let server: DnsServer;
  let upstream: DnsServer;
  let forwarding: DnsServer;
  const dig = (args: string[], port = server.port) => run('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args]);
  const short = async (...args: string[]) => (await dig(['+short', ...args])).stdout.trim().split('\n').filter(Boolean).sort();

  before(async () => {
    server = new DnsServer({ address: '127.0.0.1', port: 0, resolver: new Resolver({ view: cluster, localAddresses: ['127.0.0.1'] }) });
    await server.start();
    // An "upstream" of our own on loopback: example.test's address, nothing else.
    upstream = new DnsServer({
      address: '127.0.0.1',
      port: 0,
      resolver: {
        resolve: (q) =>
          q.name === 'example.test' && q.type === 'A'
            ? { rcode: 'NOERROR', authoritative: true, answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.7' }], authorities: [], additionals: [] }
            : fallthrough,
      },
    });
    await upstream.start();
    forwarding = new DnsServer({ address: '127.0.0.1', port: 0, resolver: new Resolver({ view: cluster, localAddresses: ['127.0.0.1'] }), upstream: { host: '127.0.0.1', port: upstream.port } });
    await forwarding.start();
  });

  after(async () => {
    await server?.stop();
    await upstream?.stop();
    await forwarding?.stop();
  });

  it('answers A of a ClusterIP Service, authoritative, over UDP and TCP', async () => {
    const out = await dig(['myservice.default.svc.cluster.local', 'A']);
    assert.match(out.stdout, /status: NOERROR/);
    assert.match(out.stdout, /flags: qr aa rd;/);
    assert.match(out.stdout, /^myservice\.default\.svc\.cluster\.local\.\s+5\s+IN\s+A\s+10\.96\.0\.20$/m);
    assert.deepEqual(await short('+tcp', 'myservice.default.svc.cluster.local'), ['10.96.0.20']);
    assert.deepEqual(await short('MYSERVICE.default.SVC.cluster.local'), ['10.96.0.20']);
  });

  it('answers AAAA, NODATA and NXDOMAIN with the SOA CoreDNS sends', async () => {
    assert.deepEqual(await short('dual.web.svc.cluster.local', 'AAAA'), ['fd00:10:96::30']);
    const soa = /^cluster\.local\.\s+5\s+IN\s+SOA\s+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. 1764633600 7200 1800 86400 5$/m;
    const nodata = await dig(['myservice.default.svc.cluster.local', 'AAAA']);
    assert.match(nodata.stdout, /status: NOERROR/);
    assert.match(nodata.stdout, /ANSWER: 0, AUTHORITY: 1/);
    assert.match(nodata.stdout, soa);
    for (const name of ['myservice.svc.cluster.local', 'myservice.cluster.local']) {
      const nx = await dig([name, 'A']);
      assert.match(nx.stdout, /status: NXDOMAIN/, name);
      assert.match(nx.stdout, soa, name);
    }
  });

  it('answers headless Services, endpoint names and pods', async () => {
    assert.deepEqual(await short('headless.web.svc.cluster.local'), ['10.217.0.5', '10.217.0.6']);
    assert.deepEqual(await short('web-0.headless.web.svc.cluster.local'), ['10.217.0.5']);
    assert.deepEqual(await short('10-217-0-42.default.pod.cluster.local'), ['10.217.0.42']);
  });

  it('answers SRV with CoreDNS target names and their addresses', async () => {
    const out = await dig(['_http._tcp.headless.web.svc.cluster.local', 'SRV']);
    assert.match(out.stdout, /^_http\._tcp\.headless\.web\.svc\.cluster\.local\.\s+5\s+IN\s+SRV\s+0 50 8080 web-0\.headless\.web\.svc\.cluster\.local\.$/m);
    assert.match(out.stdout, /^_http\._tcp\.headless\.web\.svc\.cluster\.local\.\s+5\s+IN\s+SRV\s+0 50 8080 10-217-0-6\.headless\.web\.svc\.cluster\.local\.$/m);
    assert.match(out.stdout, /ADDITIONAL SECTION:\nweb-0\.headless\.web\.svc\.cluster\.local\.\s+5\s+IN\s+A\s+10\.217\.0\.5$/m);
    assert.deepEqual(await short('_http._tcp.myservice.default.svc.cluster.local', 'SRV'), ['0 100 80 myservice.default.svc.cluster.local.']);
  });

  it('answers PTR, CNAME and TXT', async () => {
    assert.deepEqual(await short('-x', '10.96.0.20'), ['myservice.default.svc.cluster.local.']);
    assert.deepEqual(await short('-x', '10.217.0.5'), ['web-0.headless.web.svc.cluster.local.']);
    assert.deepEqual(await short('external.default.svc.cluster.local'), ['example.com.']);
    assert.deepEqual(await short('alias.default.svc.cluster.local'), ['10.96.0.20', 'myservice.default.svc.cluster.local.']);
    assert.deepEqual(await short('dns-version.cluster.local', 'TXT'), ['"1.1.0"']);
  });

  it('truncates a UDP answer to the client buffer and sets TC; dig then gets all over TCP', async () => {
    const udp = await dig(['+ignore', '+noedns', 'big.web.svc.cluster.local']);
    assert.match(udp.stdout, /flags: qr aa tc rd;/);
    const kept = Number(/ANSWER: (\d+)/.exec(udp.stdout)![1]);
    assert.ok(kept > 0 && kept < bigCount, `kept ${kept}`);
    const edns = await dig(['+ignore', '+bufsize=1232', 'big.web.svc.cluster.local']);
    assert.match(edns.stdout, /flags: qr aa tc rd;/);
    assert.ok(Number(/ANSWER: (\d+)/.exec(edns.stdout)![1]) > kept);
    assert.match(edns.stdout, /EDNS: version: 0, flags:; udp: 1232/);
    // Without +ignore dig retries over TCP on TC.
    const retried = await dig(['big.web.svc.cluster.local']);
    assert.match(retried.stdout, /Truncated, retrying in TCP mode/);
    assert.match(retried.stdout, new RegExp(`ANSWER: ${bigCount},`));
    assert.equal((await short('+tcp', 'big.web.svc.cluster.local')).length, bigCount);
  });

  it('answers names outside the cluster SERVFAIL without an upstream', async () => {
    const out = await dig(['example.test', 'A']);
    assert.match(out.stdout, /status: SERVFAIL/);
    assert.match((await dig(['-x', '192.168.1.1'])).stdout, /status: SERVFAIL/);
  });

  it('forwards names outside the cluster to the upstream over UDP and TCP', async () => {
    assert.deepEqual(await short('example.test', 'A').then(() => short('example.test')), []);
    const port = forwarding.port;
    assert.deepEqual((await dig(['+short', 'example.test'], port)).stdout.trim(), '192.0.2.7');
    assert.deepEqual((await dig(['+short', '+tcp', 'example.test'], port)).stdout.trim(), '192.0.2.7');
    // The upstream's own SERVFAIL comes back as it is; cluster names are still ours.
    assert.match((await dig(['other.test'], port)).stdout, /status: SERVFAIL/);
    assert.deepEqual((await dig(['+short', 'myservice.default.svc.cluster.local'], port)).stdout.trim(), '10.96.0.20');
    // An ExternalName's target is resolved by the upstream, its addresses follow the CNAME.
    assert.deepEqual((await dig(['+short', 'ext-test.default.svc.cluster.local'], port)).stdout.trim().split('\n'), ['example.test.', '192.0.2.7']);
    assert.deepEqual(await short('ext-test.default.svc.cluster.local'), ['example.test.']);
  });

  it('answers a bad message FORMERR and keeps serving', async () => {
    const { createSocket } = await import('node:dgram');
    const sock = createSocket('udp4');
    const reply = await new Promise<Buffer>((resolve) => {
      sock.on('message', (m) => resolve(m));
      // A header that promises a question the message does not carry.
      sock.send(Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x05]), server.port, '127.0.0.1');
    });
    sock.close();
    assert.equal(reply.readUInt16BE(0), 0x1234);
    assert.equal(reply[3]! & 0x0f, 1);
    assert.deepEqual(await short('myservice.default.svc.cluster.local'), ['10.96.0.20']);
  });

  it('answers hostile messages without stopping: FORMERR, NOTIMP, nothing for responses, TCP junk frames', async () => {
    const packet = (await import('dns-packet')).default;
    const q = (p: Parameters<typeof packet.encode>[0]) => packet.encode(p);
    const ask = async (msg: Buffer) => {
      const out = await server.reply(msg, 'udp');
      return out ? packet.decode(out) : undefined;
    };
    const two = await ask(q({ type: 'query', id: 7, questions: [{ name: 'a.default.svc.cluster.local', type: 'A' }, { name: 'b.default.svc.cluster.local', type: 'A' }] }));
    assert.equal((two as { rcode?: string } | undefined)?.rcode, 'FORMERR');
    const notify = Buffer.from(q({ type: 'query', id: 8, questions: [{ name: 'cluster.local', type: 'SOA' }] }));
    notify[2] = (4 << 3) | notify[2]!; // opcode NOTIFY
    assert.equal(((await ask(notify)) as { rcode?: string } | undefined)?.rcode, 'NOTIMP');
    assert.equal(await ask(q({ type: 'response', id: 9, questions: [{ name: 'cluster.local', type: 'A' }] })), undefined);
    assert.equal(await ask(Buffer.from([1, 2, 3])), undefined);

    // Over TCP: an empty frame and a junk frame, then a real query on the same connection.
    const { connect } = await import('node:net');
    const sock = connect({ host: '127.0.0.1', port: server.port });
    const frames: Buffer[] = [];
    let buf = Buffer.alloc(0);
    const third = new Promise<void>((resolve) =>
      sock.on('data', (d: Buffer) => {
        buf = Buffer.concat([buf, d]);
        while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          frames.push(buf.subarray(2, 2 + buf.readUInt16BE(0)));
          buf = buf.subarray(2 + buf.readUInt16BE(0));
          if (frames.length === 2) resolve();
        }
      }),
    );
    const query = q({ type: 'query', id: 77, questions: [{ name: 'myservice.default.svc.cluster.local', type: 'A' }] });
    const junk = Buffer.from([0xab, 0xcd, 0x01, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0xff]);
    const framed = (m: Buffer) => Buffer.concat([Buffer.from([m.length >> 8, m.length & 0xff]), m]);
    sock.write(Buffer.concat([framed(Buffer.alloc(0)), framed(junk), framed(query)]));
    await third;
    sock.destroy();
    assert.equal(frames[0]!.readUInt16BE(0), 0xabcd);
    assert.equal(frames[0]![3]! & 0x0f, 1);
    const answer = packet.decode(frames[1]!);
    assert.equal(answer.id, 77);
    assert.deepEqual(answer.answers?.map((a) => a.type === 'A' && a.data), ['10.96.0.20']);
  });

  it('is understood by nslookup', async () => {
    const out = await run('nslookup', [`-port=${server.port}`, 'myservice.default.svc.cluster.local', '127.0.0.1']);
    assert.equal(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stdout, /Name:\s+myservice\.default\.svc\.cluster\.local\nAddress: 10\.96\.0\.20/);
    const missing = await run('nslookup', [`-port=${server.port}`, 'nothere.default.svc.cluster.local', '127.0.0.1']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stdout, /server can't find nothere\.default\.svc\.cluster\.local: NXDOMAIN/);
  });

  // busybox 1.35 (the local busybox image) queries every search domain and exits 1 when any is
  // NXDOMAIN, which CoreDNS answers for myservice.svc.cluster.local and myservice.cluster.local:
  // the short name fails, the FQDN succeeds. It reads the search list only without a server
  // argument, so it runs with a pod's resolv.conf (nameserver 127.0.0.1) in a private mount namespace.
  const busybox = '/bin/busybox';
  const canBusybox = existsSync(busybox) && process.getuid?.() === 0;
  it('pins busybox 1.35 nslookup: the FQDN exits 0, the short name fails on the search domains', { skip: canBusybox ? false : 'needs /bin/busybox and root' }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kite-dns-'));
    try {
      const resolv = join(dir, 'resolv.conf');
      writeFileSync(resolv, 'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n');
      const nslookup = (name: string) =>
        run('unshare', ['--mount', 'sh', '-c', `mount --bind "$1" /etc/resolv.conf && exec ${busybox} nslookup -port="$3" "$2"`, 'sh', resolv, name, String(server.port)]);
      const fqdn = await nslookup('myservice.default.svc.cluster.local');
      assert.equal(fqdn.code, 0, fqdn.stdout + fqdn.stderr);
      assert.match(fqdn.stdout, /Name:\s+myservice\.default\.svc\.cluster\.local\nAddress:\s+10\.96\.0\.20/);
      const shortName = await nslookup('myservice');
      assert.equal(shortName.code, 1, shortName.stdout + shortName.stderr);
      assert.match(shortName.stdout, /Name:\s+myservice\.default\.svc\.cluster\.local\nAddress:\s+10\.96\.0\.20/);
      assert.match(shortName.stdout + shortName.stderr, /\*\* server can't find myservice\.svc\.cluster\.local: NXDOMAIN/);
      assert.match(shortName.stdout + shortName.stderr, /\*\* server can't find myservice\.cluster\.local: NXDOMAIN/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails to start on a port in use, and stops cleanly', async () => {
    const clash = new DnsServer({ address: '127.0.0.1', port: server.port, resolver: { resolve: () => fallthrough } });
    await assert.rejects(clash.start(), /EADDRINUSE/);
    await clash.stop();
    assert.deepEqual(await short('myservice.default.svc.cluster.local'), ['10.96.0.20']);
  });

  it('parses --cluster-dns-upstream values', () => {
    assert.deepEqual(parseUpstream('192.0.2.53'), { host: '192.0.2.53', port: 53 });
    assert.deepEqual(parseUpstream('192.0.2.53:5353'), { host: '192.0.2.53', port: 5353 });
    assert.deepEqual(parseUpstream('[fd00::53]:5353'), { host: 'fd00::53', port: 5353 });
    assert.deepEqual(parseUpstream('fd00::53'), { host: 'fd00::53', port: 53 });
    assert.throws(() => parseUpstream('dns.example'), /--cluster-dns-upstream must be IP or IP:port, not "dns.example"/);
    assert.throws(() => parseUpstream('192.0.2.53:0'), /must be IP or IP:port/);
  });
});
