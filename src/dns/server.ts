// The DNS wire side of cluster DNS: UDP and TCP on one address and port, messages decoded and
// encoded by dns-packet. A UDP answer larger than the client's buffer (EDNS0's payload size, else
// 512) keeps the answer records that fit and sets TC, so the client retries over TCP, as CoreDNS
// does (miekg/dns's Truncate). Names the resolver does not hold go to the upstream resolver when one
// is configured (the query relayed as is, over the client's transport), else SERVFAIL.
import { createSocket, type Socket as UdpSocket, type RemoteInfo } from 'node:dgram';
import { createServer, connect, isIP, type Server, type Socket } from 'node:net';
import packet, { type Answer, type DecodedPacket, type OptAnswer, type Packet, type Question } from 'dns-packet';
import type { Logger } from '../util/log.js';
import type { Service } from '../util/lifecycle.js';
import { fallthrough, type Rcode, type Resolution } from './resolver.js';

export interface QuestionResolver {
  resolve(question: Question): Resolution | typeof fallthrough;
}

export interface Upstream {
  host: string;
  port: number;
}

export interface DnsServerOptions {
  /** The address to listen on (the node's gateway; 127.0.0.1 in tests). */
  address: string;
  /** 53 on a node; 0 picks a free port (the same for UDP and TCP). */
  port: number;
  resolver: QuestionResolver;
  upstream?: Upstream;
  logger?: Logger;
  /** How long an upstream gets to answer (default 2 s). */
  upstreamTimeoutMs?: number;
}

const rcodes: Record<Rcode, number> = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 };
const minUdpSize = 512;
const maxMessage = 65535;
/** A TCP connection without a query this long is closed (CoreDNS's idle timeout is 8 s). */
const tcpIdleMs = 10_000;

/** `IP`, `IP:port` or `[IPv6]:port` (port 53 by default), as --cluster-dns-upstream takes it. */
export function parseUpstream(value: string): Upstream {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : isIP(value) === 6 ? [value, undefined] : (value.split(':') as [string, string | undefined]);
  const n = port === undefined ? 53 : Number(port);
  if (isIP(host) === 0 || !Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`--cluster-dns-upstream must be IP or IP:port, not "${value}"`);
  return { host, port: n };
}

export class DnsServer implements Service {
  readonly name = 'cluster-dns';
  private udp?: UdpSocket;
  private tcp?: Server;
  private readonly connections = new Set<Socket>();
  private boundPort = 0;

  constructor(private readonly opts: DnsServerOptions) {}

  /** The port both sockets listen on. */
  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { address } = this.opts;
    // With port 0 the TCP listener takes whatever port UDP got; a clash there picks again.
    for (let attempt = 0; ; attempt++) {
      const udp = createSocket({ type: isIP(address) === 6 ? 'udp6' : 'udp4' });
      await new Promise<void>((resolve, reject) => {
        udp.once('error', (err) => {
          udp.close();
          reject(err);
        });
        udp.bind(this.opts.port, address, () => {
          udp.removeAllListeners('error');
          resolve();
        });
      });
      const port = udp.address().port;
      const tcp = createServer((socket) => this.serveTcp(socket));
      try {
        await new Promise<void>((resolve, reject) => {
          tcp.once('error', reject);
          tcp.listen({ port, host: address }, () => {
            tcp.off('error', reject);
            resolve();
          });
        });
      } catch (err) {
        udp.close();
        if (this.opts.port !== 0 || attempt >= 5) throw err;
        continue;
      }
      udp.on('message', (msg, rinfo) => this.serveUdp(udp, msg, rinfo));
      udp.on('error', (err) => this.opts.logger?.warn({ err }, 'cluster DNS UDP socket'));
      tcp.on('error', (err) => this.opts.logger?.warn({ err }, 'cluster DNS TCP listener'));
      this.udp = udp;
      this.tcp = tcp;
      this.boundPort = port;
      return;
    }
  }

  async stop(): Promise<void> {
    const { udp, tcp } = this;
    this.udp = undefined;
    this.tcp = undefined;
    udp?.close();
    for (const c of this.connections) c.destroy();
    if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }

  /**
   * The reply to one wire message, or undefined when it deserves none (not a query, no header).
   * Synchronous but for a relay to the upstream, so the UDP path answers in the message's own turn.
   */
  reply(query: Buffer, transport: 'udp' | 'tcp'): Buffer | undefined | Promise<Buffer | undefined> {
    let req: DecodedPacket;
    try {
      req = packet.decode(query);
    } catch {
      // Undecodable: FORMERR when at least the header (id, QR) is there, as miekg/dns servers do.
      if (query.length < 12 || query[2]! & 0x80) return undefined;
      return packet.encode({ id: query.readUInt16BE(0), type: 'response', flags: rcodes.FORMERR, questions: [], answers: [], authorities: [], additionals: [] });
    }
    if (req.type === 'response') return undefined;
    const opcode = (req as DecodedPacket & { opcode?: string }).opcode;
    const questions = req.questions ?? [];
    let resolution: Resolution | typeof fallthrough;
    if (opcode !== 'QUERY') resolution = failure('NOTIMP');
    else if (questions.length !== 1) resolution = failure('FORMERR');
    else resolution = this.opts.resolver.resolve(questions[0]!);
    if (resolution !== fallthrough) {
      if (resolution.chase && this.opts.upstream) return this.chase(req, resolution, transport);
      return this.encode(req, resolution, transport);
    }
    if (!this.opts.upstream) return this.encode(req, failure('SERVFAIL'), transport);
    return (transport === 'udp' ? this.forwardUdp(query) : this.forwardTcp(query)).catch((err: unknown) => {
      this.opts.logger?.debug({ err }, 'cluster DNS upstream');
      return this.encode(req, failure('SERVFAIL'), transport);
    });
  }

  /** An ExternalName's CNAME with the upstream's answer for its target appended, as CoreDNS's Lookup of the target. */
  private async chase(req: DecodedPacket, resolution: Resolution, transport: 'udp' | 'tcp'): Promise<Buffer> {
    const type = req.questions![0]!.type;
    const query = packet.encode({ type: 'query', id: (req.id ?? 0) ^ 0x5a5a, flags: packet.RECURSION_DESIRED, questions: [{ name: resolution.chase!, type, class: 'IN' }] });
    try {
      const answer = packet.decode(await (transport === 'udp' ? this.forwardUdp(query) : this.forwardTcp(query)));
      return this.encode(req, { ...resolution, answers: [...resolution.answers, ...(answer.answers ?? [])] }, transport);
    } catch (err) {
      this.opts.logger?.debug({ err }, 'cluster DNS upstream');
      return this.encode(req, resolution, transport);
    }
  }

  private encode(req: DecodedPacket, resolution: Resolution, transport: 'udp' | 'tcp'): Buffer {
    const opt = req.additionals?.find((a): a is OptAnswer => a.type === 'OPT');
    const reply: Packet = {
      id: req.id,
      type: 'response',
      flags: ((req.flags ?? 0) & packet.RECURSION_DESIRED) | (resolution.authoritative ? packet.AUTHORITATIVE_ANSWER : 0) | rcodes[resolution.rcode],
      questions: req.questions,
      answers: resolution.answers,
      authorities: resolution.authorities,
      additionals: resolution.additionals,
    };
    const limit = transport === 'tcp' ? maxMessage : Math.min(maxMessage, Math.max(minUdpSize, opt?.udpPayloadSize ?? 0));
    // The client's OPT, echoed with our version and no flags (CoreDNS's SizeAndDo).
    const echo: Answer[] = opt ? [{ type: 'OPT', name: '.', udpPayloadSize: opt.udpPayloadSize, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] : [];
    return encodeWithin(reply, echo, limit);
  }

  private serveUdp(udp: UdpSocket, msg: Buffer, rinfo: RemoteInfo): void {
    const send = (out: Buffer | undefined) => {
      if (out && this.udp === udp) udp.send(out, rinfo.port, rinfo.address);
    };
    try {
      const out = this.reply(msg, 'udp');
      if (out instanceof Promise) out.then(send, (err: unknown) => this.opts.logger?.warn({ err }, 'cluster DNS query'));
      else send(out);
    } catch (err) {
      this.opts.logger?.warn({ err }, 'cluster DNS query');
    }
  }

  private serveTcp(socket: Socket): void {
    this.connections.add(socket);
    socket.on('close', () => this.connections.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(tcpIdleMs, () => socket.destroy());
    // Length-prefixed messages (RFC 1035 4.2.2), answered in order.
    let buffered = Buffer.alloc(0);
    let queue = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2) {
        const len = buffered.readUInt16BE(0);
        if (buffered.length < 2 + len) break;
        const msg = buffered.subarray(2, 2 + len);
        buffered = buffered.subarray(2 + len);
        queue = queue.then(async () => {
          const out = await this.reply(msg, 'tcp');
          if (!out) return;
          const framed = Buffer.alloc(2 + out.length);
          framed.writeUInt16BE(out.length, 0);
          out.copy(framed, 2);
          if (!socket.destroyed) socket.write(framed);
        }).catch((err: unknown) => this.opts.logger?.warn({ err }, 'cluster DNS query'));
      }
    });
  }

  private forwardUdp(query: Buffer): Promise<Buffer> {
    const { host, port } = this.opts.upstream!;
    const id = query.readUInt16BE(0);
    const sock = createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4' });
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('upstream timed out')), this.opts.upstreamTimeoutMs ?? 2000);
      sock.on('error', reject);
      sock.on('message', (msg) => {
        if (msg.length >= 12 && msg.readUInt16BE(0) === id) {
          clearTimeout(timer);
          resolve(msg);
        }
      });
      sock.send(query, port, host);
    }).finally(() => sock.close());
  }

  private forwardTcp(query: Buffer): Promise<Buffer> {
    const { host, port } = this.opts.upstream!;
    return new Promise<Buffer>((resolve, reject) => {
      const sock = connect({ host, port });
      sock.setTimeout(this.opts.upstreamTimeoutMs ?? 2000, () => sock.destroy(new Error('upstream timed out')));
      let got = Buffer.alloc(0);
      sock.on('error', reject);
      sock.on('close', () => reject(new Error('upstream closed the connection')));
      sock.on('data', (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        if (got.length >= 2 && got.length >= 2 + got.readUInt16BE(0)) {
          resolve(got.subarray(2, 2 + got.readUInt16BE(0)));
          sock.destroy();
        }
      });
      const framed = Buffer.alloc(2 + query.length);
      framed.writeUInt16BE(query.length, 0);
      query.copy(framed, 2);
      sock.write(framed);
    });
  }
}

function failure(rcode: Rcode): Resolution {
  return { rcode, authoritative: false, answers: [], authorities: [], additionals: [] };
}

/**
 * The reply encoded within limit bytes: whole if it fits, else the most answer records that fit
 * (then authority and additional records while room is left) with TC set when answers were dropped.
 */
export function encodeWithin(reply: Packet, opt: Answer[], limit: number): Buffer {
  const answers = reply.answers ?? [];
  const authorities = reply.authorities ?? [];
  const additionals = reply.additionals ?? [];
  const build = (a: number, ns: number, extra: number, tc: boolean): Packet => ({
    ...reply,
    flags: (reply.flags ?? 0) | (tc ? packet.TRUNCATED_RESPONSE : 0),
    answers: answers.slice(0, a),
    authorities: authorities.slice(0, ns),
    additionals: [...additionals.slice(0, extra), ...opt],
  });
  const whole = packet.encode(build(answers.length, authorities.length, additionals.length, false));
  if (whole.length <= limit) return whole;
  const most = (max: number, fits: (n: number) => boolean): number => {
    let lo = 0;
    let hi = max;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const size = (p: Packet) => packet.encodingLength(p);
  const a = most(answers.length, (n) => size(build(n, 0, 0, false)) <= limit);
  const ns = a < answers.length ? 0 : most(authorities.length, (n) => size(build(a, n, 0, false)) <= limit);
  const extra = ns < authorities.length ? 0 : most(additionals.length, (n) => size(build(a, ns, n, false)) <= limit);
  return packet.encode(build(a, ns, extra, a < answers.length));
}
