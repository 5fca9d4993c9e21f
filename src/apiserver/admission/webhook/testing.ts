// A webhook server for tests: HTTPS on 127.0.0.1 with a certificate from a throwaway CA (also valid
// for the Service name webhook.d.svc), answering
// each AdmissionReview with what `answer` returns (or never, when it returns undefined).
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, issueServingCertificate } from '../../authn/pki.js';
import type { AdmissionRequest } from './review.js';

export interface TestWebhookAnswer {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string };
  /** JSON patch operations, sent base64 with patchType JSONPatch. */
  patch?: unknown[];
  warnings?: string[];
  auditAnnotations?: Record<string, unknown>;
  /** Sends the headers and half the body, then nothing more. */
  stall?: boolean;
}

export interface TestWebhookServer {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The CA's certificate, base64 as in clientConfig.caBundle. */
  caBundle: string;
  /** The requests received, by path. */
  received: { path: string; request: AdmissionRequest }[];
  close(): Promise<void>;
}

export async function startTestWebhookServer(answer: (path: string, request: AdmissionRequest) => TestWebhookAnswer | undefined): Promise<TestWebhookServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kite-whk-pki-'));
  const pki = await ensurePki(dir);
  const cert = await issueServingCertificate(pki, { commonName: 'webhook', sans: ['127.0.0.1', 'localhost', 'webhook.d.svc'] });
  const received: TestWebhookServer['received'] = [];
  const server: Server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: AdmissionRequest };
      const path = (req.url ?? '').split('?')[0]!;
      received.push({ path, request: review.request });
      const a = answer(path, review.request);
      if (!a) return; // never answers
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: a.allowed };
      if (a.status) response.status = a.status;
      if (a.warnings) response.warnings = a.warnings;
      if (a.auditAnnotations) response.auditAnnotations = a.auditAnnotations;
      if (a.patch) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(JSON.stringify(a.patch)).toString('base64');
      }
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (a.stall) res.write(body.slice(0, body.length / 2));
      else res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caBundle: Buffer.from(pki.ca.certPem).toString('base64'),
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
