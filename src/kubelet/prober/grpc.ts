// gRPC probes (upstream's pkg/probe/grpc): the standard grpc.health.v1.Health/Check over an
// insecure connection, SERVING succeeds, anything else fails with upstream's texts. The two
// messages are one string and one enum field each, so they are encoded by hand.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { Clock } from '../../util/clock.js';
import { dialErrorText, goSeconds, joinHostPort } from './goformat.js';
import { userAgent, type ProbeOutcome } from './probe.js';

export const HEALTH_CHECK_METHOD = '/grpc.health.v1.Health/Check';

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;

export function encodeHealthCheckRequest(req: { service: string }): Buffer {
  const w = protobuf.Writer.create();
  if (req.service) w.uint32((1 << 3) | 2).string(req.service);
  return Buffer.from(w.finish());
}

export function decodeHealthCheckRequest(buf: Buffer): { service: string } {
  const r = protobuf.Reader.create(buf);
  let service = '';
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 2) service = r.string();
    else r.skipType(tag & 7);
  }
  return { service };
}

export function encodeHealthCheckResponse(res: { status: number }): Buffer {
  const w = protobuf.Writer.create();
  if (res.status) w.uint32(1 << 3).int32(res.status);
  return Buffer.from(w.finish());
}

export function decodeHealthCheckResponse(buf: Buffer): { status: number } {
  const r = protobuf.Reader.create(buf);
  let status = 0;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && (tag & 7) === 0) status = r.int32();
    else r.skipType(tag & 7);
  }
  return { status };
}

/** google.golang.org/grpc/codes names, as Go prints a status error. */
const goCodeNames = ['OK', 'Canceled', 'Unknown', 'InvalidArgument', 'DeadlineExceeded', 'NotFound', 'AlreadyExists', 'PermissionDenied', 'ResourceExhausted', 'FailedPrecondition', 'Aborted', 'OutOfRange', 'Unimplemented', 'Internal', 'Unavailable', 'DataLoss', 'Unauthenticated'];

/** grpc-js reports a refused connection in its own words; Go's client says it like this. */
function goStatusDesc(err: grpc.ServiceError, addr: string): string {
  const errno = /\b(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|ENOTFOUND)\b/.exec(err.details ?? '')?.[1];
  if (err.code === grpc.status.UNAVAILABLE && errno) {
    return `connection error: desc = "transport: Error while dialing: ${dialErrorText(addr, Object.assign(new Error(errno), { code: errno }))}"`;
  }
  return err.details ?? err.message;
}

export function grpcProbe(host: string, service: string, port: number, opts: { clock: Clock; timeoutMs: number; signal?: AbortSignal }): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const timeout = goSeconds(opts.timeoutMs / 1000);
  const client = new grpc.Client(addr, grpc.credentials.createInsecure(), { 'grpc.primary_user_agent': userAgent('probe') });
  return new Promise<ProbeOutcome>((resolve) => {
    let timedOut = false;
    const call = client.makeUnaryRequest(
      HEALTH_CHECK_METHOD,
      encodeHealthCheckRequest,
      decodeHealthCheckResponse,
      { service },
      new grpc.Metadata(),
      {},
      (err, res) => {
        timer.cancel();
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) {
          if (timedOut || err.code === grpc.status.DEADLINE_EXCEEDED) return resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${timeout}` });
          if (err.code === grpc.status.UNIMPLEMENTED) {
            return resolve({ result: 'failure', output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}` });
          }
          return resolve({ result: 'failure', output: `error: health rpc probe failed: rpc error: code = ${goCodeNames[err.code] ?? 'Unknown'} desc = ${goStatusDesc(err, addr)}` });
        }
        const status = res?.status ?? 0;
        if (status !== 1) return resolve({ result: 'failure', output: `service unhealthy (responded with "${SERVING_STATUS[status] ?? String(status)}")` });
        resolve({ result: 'success', output: 'service healthy' });
      },
    );
    const timer = opts.clock.setTimer(opts.timeoutMs, () => {
      timedOut = true;
      call.cancel();
    });
    const onAbort = () => call.cancel();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
  }).finally(() => client.close());
}
