import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { FakeClock, realClock } from '../../util/clock.js';
import { formatCriLine, formatLogTimeFixed, parseCriLine, parseLogTime } from './cri.js';
import { logOptionsFrom, readLogs, type LogOptions } from './read.js';

const all: LogOptions = { tail: -1, bytes: -1, follow: false, timestamp: false };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'kite-logs-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function sink(): { out: PassThrough; text: () => string } {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  return { out, text: () => Buffer.concat(chunks).toString() };
}

const notRunning = { isRunning: async () => false, clock: realClock };

const sample = [
  formatCriLine('2026-01-01T00:00:01.5Z', 'stdout', 'one'),
  formatCriLine('2026-01-01T00:00:02.000000001Z', 'stderr', 'two'),
  formatCriLine('2026-01-01T00:00:03Z', 'stdout', 'thr', true),
  formatCriLine('2026-01-01T00:00:03.1Z', 'stdout', 'ee'),
  formatCriLine('2026-01-01T00:00:04+02:00', 'stdout', 'four'),
].join('');

test('parseCriLine reads time, stream, tag and message', () => {
  const full = parseCriLine(Buffer.from('2026-01-01T00:00:01.123456789Z stderr F hello world\n'));
  assert.equal(full.stream, 'stderr');
  assert.equal(full.partial, false);
  assert.equal(full.log.toString(), 'hello world\n');
  assert.equal(full.timestamp.nanos, 1767225601123456789n);
  const part = parseCriLine(Buffer.from('2026-01-01T00:00:01Z stdout P:x abc\n'));
  assert.equal(part.partial, true);
  assert.equal(part.log.toString(), 'abc');
  assert.throws(() => parseCriLine(Buffer.from('garbage\n')));
  assert.throws(() => parseCriLine(Buffer.from('2026-01-01T00:00:01Z stdin F x\n')), /unexpected stream type/);
});

test('timestamps print as RFC3339NanoFixed in the record\'s own zone', () => {
  assert.equal(formatLogTimeFixed(parseLogTime('2026-01-01T00:00:01.5Z')), '2026-01-01T00:00:01.500000000Z');
  assert.equal(formatLogTimeFixed(parseLogTime('2026-01-01T02:00:00+02:00')), '2026-01-01T02:00:00.000000000+02:00');
  assert.equal(parseLogTime('2026-01-01T02:00:00+02:00').nanos, parseLogTime('2026-01-01T00:00:00Z').nanos);
});

test('readLogs: whole file, partial lines joined, both streams', async () => {
  await withDir(async (dir) => {
    const path = join(dir, '0.log');
    await writeFile(path, sample);
    const s = sink();
    await readLogs(path, all, s.out, notRunning);
    assert.equal(s.text(), 'one\ntwo\nthree\nfour\n');
  });
});

test('readLogs: tail, timestamps (once per joined line), since and limitBytes', async () => {
  await withDir(async (dir) => {
    const path = join(dir, '0.log');
    await writeFile(path, sample);
    const cases: [Partial<LogOptions>, string][] = [
      [{ tail: 2 }, 'ee\nfour\n'],
      [{ tail: 0 }, ''],
      [{ tail: 100 }, 'one\ntwo\nthree\nfour\n'],
      [{ timestamp: true, tail: 3 }, '2026-01-01T00:00:03.000000000Z three\n2026-01-01T00:00:04.000000000+02:00 four\n'],
      // 00:00:04+02:00 is 22:00:04Z the day before: older than the bound, skipped.
      [{ sinceNanos: parseLogTime('2026-01-01T00:00:02Z').nanos }, 'two\nthree\n'],
      [{ bytes: 6 }, 'one\ntw'],
      [{ bytes: 4, timestamp: true }, '2026'],
    ];
    for (const [opts, want] of cases) {
      const s = sink();
      await readLogs(path, { ...all, ...opts }, s.out, notRunning);
      assert.equal(s.text(), want, JSON.stringify(opts, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
    }
  });
});

test('logOptionsFrom maps PodLogOptions', () => {
  const now = Date.UTC(2026, 0, 1, 0, 1, 0);
  const o = logOptionsFrom({ sinceSeconds: 60, tailLines: 5, limitBytes: 10, follow: true, timestamps: true }, now);
  assert.deepEqual(o, { tail: 5, bytes: 10, sinceNanos: BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n, follow: true, timestamp: true });
  assert.equal(logOptionsFrom({ sinceTime: '2026-01-01T00:00:00Z' }, now).sinceNanos, BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n);
  assert.deepEqual(logOptionsFrom({}, now), { tail: -1, bytes: -1, sinceNanos: undefined, follow: false, timestamp: false });
});

test('readLogs: a missing file is an error naming it', async () => {
  await assert.rejects(readLogs('/nonexistent/0.log', all, sink().out, notRunning), /failed to open log file "\/nonexistent\/0.log"/);
});

/** Resolves once the sink's text satisfies pred. */
function until(s: { out: PassThrough; text: () => string }, pred: (t: string) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (pred(s.text())) {
        s.out.off('data', check);
        resolve();
      }
    };
    s.out.on('data', check);
    setImmediate(check);
  });
}

test('readLogs follow: appended data, a rotation, then stop when the container stops and the file is drained', async () => {
  await withDir(async (dir) => {
    const path = join(dir, '0.log');
    await writeFile(path, formatCriLine('2026-01-01T00:00:01Z', 'stdout', 'a'));
    let running = true;
    const clock = new FakeClock();
    const s = sink();
    const done = readLogs(path, { ...all, follow: true }, s.out, { isRunning: async () => running, clock });
    await until(s, (t) => t === 'a\n');
    await appendFile(path, formatCriLine('2026-01-01T00:00:02Z', 'stdout', 'b'));
    await clock.advance(1000); // the periodic check finds it even without a file event
    await until(s, (t) => t === 'a\nb\n');
    // Rotation: the last lines written to the old file, then the runtime reopens a new file.
    await appendFile(path, formatCriLine('2026-01-01T00:00:03Z', 'stdout', 'c'));
    await rename(path, `${path}.20260101-000003`);
    await writeFile(path, formatCriLine('2026-01-01T00:00:04Z', 'stdout', 'd'));
    await clock.advance(1000);
    await until(s, (t) => t === 'a\nb\nc\nd\n');
    await appendFile(path, formatCriLine('2026-01-01T00:00:05Z', 'stdout', 'e'));
    running = false;
    await clock.advance(1000);
    await done;
    assert.equal(s.text(), 'a\nb\nc\nd\ne\n');
  });
});

test('readLogs follow ends quietly when the signal aborts', async () => {
  await withDir(async (dir) => {
    const path = join(dir, '0.log');
    await writeFile(path, formatCriLine('2026-01-01T00:00:01Z', 'stdout', 'a'));
    const ac = new AbortController();
    const s = sink();
    const clock = new FakeClock();
    const done = readLogs(path, { ...all, follow: true }, s.out, { isRunning: async () => true, clock, signal: ac.signal });
    await until(s, (t) => t === 'a\n');
    ac.abort();
    await done;
    assert.equal(s.text(), 'a\n');
  });
});
