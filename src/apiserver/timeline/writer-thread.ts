// The pod timeline writer's thread entry: SQLite transactions for the API server's timeline store,
// taken in the order they were posted, each answered with its id (and the error, if it failed).
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteTimelineWriter, type TimelineWrite, type WriterMessage } from './file.js';

const port = parentPort!;
const decoder = new TextDecoder();
const writer = new SqliteTimelineWriter((workerData as { file: string }).file);
port.on('message', (m: WriterMessage) => {
  if (m === 'close') {
    void writer.close().then(() => port.postMessage('closed' satisfies WriterMessage));
    return;
  }
  if (typeof m !== 'object' || !('writes' in m)) return;
  writer.write(JSON.parse(decoder.decode(m.writes)) as TimelineWrite[]).then(
    () => port.postMessage({ id: m.id } satisfies WriterMessage),
    (err: unknown) => port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) } satisfies WriterMessage),
  );
});
