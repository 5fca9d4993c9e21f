// The real API server in this process (so a polluted prototype is seen directly), on loopback with
// SQLite in a temp dir and no controllers, driven over HTTPS with the admin certificate.
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ApiServer } from '../../src/apiserver/server.js';
import { loadKubeconfig } from '../../src/client/kubeconfig.js';

export interface Request {
  method: string;
  /** Sent as is: no normalization of `.`/`..` segments or escapes. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** A watch or a log stream: a 200 whose body does not end is cut after this many ms and is fine. */
  streamMs?: number;
}

export interface Answer {
  code: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The answer was a stream cut by the client. */
  cut?: boolean;
}

export interface FuzzServer {
  send(r: Request): Promise<Answer>;
  /** What the server logged at warn or above since the last call (a 500's stack, for the report). */
  takeLogs(): string[];
  stop(): Promise<void>;
}

/** No answer at all within this: the request hung. */
const answerDeadlineMs = 20_000;

export async function startFuzzServer(): Promise<FuzzServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kite-fuzz-'));
  let logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString('utf8'));
      if (logs.length > 50) logs.shift();
      done();
    },
  });
  const server = new ApiServer({
    dataDir,
    listen: '127.0.0.1:0',
    storage: 'sqlite',
    components: [],
    // No controllers run: no `default` ServiceAccount appears for ServiceAccount admission to find.
    admission: { disable: ['ServiceAccount'] },
    logger: pino({ level: 'warn' }, sink),
  });
  await server.start();
  const cfg = await loadKubeconfig(server.kubeconfigPath);
  const url = new URL(cfg.server);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4, ca: cfg.ca, cert: cfg.cert, key: cfg.key });

  const send = (r: Request): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...r.headers };
      if (r.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(r.body));
      const req = https.request({ agent, host: url.hostname, port: url.port, method: r.method, path: r.path, headers });
      const deadline = setTimeout(() => {
        req.destroy();
        reject(new Error(`no answer within ${answerDeadlineMs} ms`));
      }, answerDeadlineMs);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        const finish = (cut: boolean) => {
          clearTimeout(deadline);
          resolve({ code: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), cut });
        };
        let streamTimer: NodeJS.Timeout | undefined;
        if (r.streamMs !== undefined && res.statusCode === 200) {
          streamTimer = setTimeout(() => {
            finish(true);
            res.destroy();
          }, r.streamMs);
        }
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          clearTimeout(streamTimer);
          finish(false);
        });
        res.on('error', (err) => {
          clearTimeout(streamTimer);
          clearTimeout(deadline);
          reject(err);
        });
      });
      req.on('error', (err) => {
        clearTimeout(deadline);
        reject(err);
      });
      req.end(r.body);
    });

  return {
    send,
    takeLogs: () => {
      const out = logs;
      logs = [];
      return out;
    },
    stop: async () => {
      agent.destroy();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
