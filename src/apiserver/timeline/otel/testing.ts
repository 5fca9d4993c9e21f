// For tests of the OTLP export (unit and e2e): a receiver that decodes what the exporter sends.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The parts of an OTLP/JSON ExportTraceServiceRequest the tests read. */
export interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: OtlpValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans: { resource: { attributes: { key: string; value: OtlpValue }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

/** A received span with its resource's service. */
export type ReceivedSpan = OtlpSpan & { service: string; attrs: Map<string, OtlpValue> };

/** A tiny OTLP/HTTP (JSON) receiver on loopback: keeps every span posted to /v1/traces. */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly contentTypes: string[] = [];
  /** Answer every export with this status instead of taking it. */
  failWith?: number;
  private server?: Server;

  /** Listens on a free loopback port; returns the traces endpoint to give the exporter. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url !== '/v1/traces' || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        if (this.failWith !== undefined) {
          res.writeHead(this.failWith).end();
          return;
        }
        this.contentTypes.push(req.headers['content-type'] ?? '');
        let body: OtlpRequest;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
        } catch {
          res.writeHead(400).end();
          return;
        }
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const ss of rs.scopeSpans) for (const s of ss.spans) this.spans.push({ ...s, service, attrs: new Map(s.attributes.map((a) => [a.key, a.value])) });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
