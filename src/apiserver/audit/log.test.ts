import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../util/clock.js';
import { newLogger } from '../../util/log.js';
import { backupTime, LogBackend } from './log.js';
import type { AuditEvent } from './event.js';

const event = (auditID: string, pad = 0): AuditEvent => ({
  kind: 'Event', apiVersion: 'audit.k8s.io/v1', level: 'Metadata', auditID, stage: 'ResponseComplete', requestURI: `/${'x'.repeat(pad)}`, verb: 'get',
  user: { username: 'jane' }, requestReceivedTimestamp: '', stageTimestamp: '',
});

test('backups are named <name>-<UTC time>.<ext>, as lumberjack names them', () => {
  assert.equal(backupTime(Date.UTC(2026, 11, 3, 9, 5, 7, 42)), '2026-12-03T09-05-07.042');
});

test('one JSON event a line; the file rotates before it would pass maxsize and keeps maxbackup backups', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-audit-'));
  try {
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    const path = join(dir, 'audit.log');
    const backend = new LogBackend({ path, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0, clock, logger: newLogger('test') });
    const big = 400 * 1024;
    for (let i = 0; i < 7; i++) {
      backend.write(event(`e${i}`, big));
      await clock.advance(1000);
    }
    backend.close();
    const files = readdirSync(dir).sort();
    // 7 events of ~400 KiB: two a file, so e0-e1, e2-e3, e4-e5 rotated and e6 current; two backups kept.
    assert.deepEqual(files, ['audit-2026-12-03T12-00-04.000.log', 'audit-2026-12-03T12-00-06.000.log', 'audit.log']);
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as AuditEvent).auditID), ['e6']);
    assert.deepEqual(readFileSync(join(dir, files[1]!), 'utf8').trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditEvent).auditID), ['e4', 'e5']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('maxage removes backups older than its days, whatever their count', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-audit-'));
  try {
    const clock = new FakeClock(Date.UTC(2026, 11, 3, 12, 0, 0));
    writeFileSync(join(dir, 'audit-2026-11-20T00-00-00.000.log'), 'old\n');
    writeFileSync(join(dir, 'audit-2026-12-02T23-00-00.000.log'), 'recent\n');
    writeFileSync(join(dir, 'audit-notatime.log'), 'unrelated\n');
    const path = join(dir, 'audit.log');
    writeFileSync(path, 'x'.repeat(1024 * 1024 - 10));
    const backend = new LogBackend({ path, maxSizeMB: 1, maxBackups: 0, maxAgeDays: 7, clock, logger: newLogger('test') });
    backend.write(event('a'));
    backend.close();
    assert.deepEqual(readdirSync(dir).sort(), ['audit-2026-12-02T23-00-00.000.log', 'audit-2026-12-03T12-00-00.000.log', 'audit-notatime.log', 'audit.log']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a log that cannot be written is reported, never thrown to the request', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kite-audit-'));
  try {
    chmodSync(dir, 0o500);
    const errors: unknown[] = [];
    const logger = { error: (o: unknown) => errors.push(o) } as unknown as ReturnType<typeof newLogger>;
    const backend = new LogBackend({ path: join(dir, 'sub', 'audit.log'), maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, clock: new FakeClock(), logger });
    assert.doesNotThrow(() => backend.write(event('a')));
    // root may write anywhere: then the write succeeded instead.
    assert.ok(errors.length === 1 || process.getuid?.() === 0);
  } finally {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
});
