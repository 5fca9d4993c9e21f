import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StoredObject } from '../../api/meta.js';
import type { CoreEvent, EventsV1Event } from '../../api/types.js';
import { eventPrinter, eventsV1Printer } from './events.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString();
const micro = (s: number) => ago(s).replace('Z', '000Z'); // MicroTime: six fractional digits
const stored = <T>(o: T) => o as T & StoredObject;

const pod = { kind: 'Pod', namespace: 'default', name: 'web', uid: 'u1', apiVersion: 'v1' };

void test('event columns: the compact set, then the wide ones', () => {
  assert.deepEqual(
    eventPrinter.columns.map((c) => [c.name, c.priority, c.format]),
    [
      ['Last Seen', 0, ''],
      ['Type', 0, ''],
      ['Reason', 0, ''],
      ['Object', 0, ''],
      ['Subobject', 1, ''],
      ['Source', 1, ''],
      ['Message', 0, ''],
      ['First Seen', 1, ''],
      ['Count', 1, ''],
      ['Name', 1, 'name'],
    ],
  );
  assert.deepEqual(eventsV1Printer.columns, eventPrinter.columns);
});

void test('core events', () => {
  const cases: { name: string; ev: CoreEvent; cells: unknown[] }[] = [
    {
      name: 'repeated back-off from the kubelet',
      ev: {
        metadata: { name: 'web.17f1', namespace: 'default' },
        involvedObject: { ...pod, fieldPath: 'spec.containers{app}' },
        type: 'Warning',
        reason: 'BackOff',
        message: 'Back-off restarting failed container app in pod web_default(u1)\n',
        source: { component: 'kubelet', host: 'node-1' },
        firstTimestamp: ago(600),
        lastTimestamp: ago(30),
        count: 12,
      },
      cells: ['30s', 'Warning', 'BackOff', 'pod/web', 'spec.containers{app}', 'kubelet, node-1', 'Back-off restarting failed container app in pod web_default(u1)', '10m', 12, 'web.17f1'],
    },
    {
      name: 'scheduler event with only eventTime and the reporting fields',
      ev: {
        metadata: { name: 'web.17f2', namespace: 'default' },
        involvedObject: pod,
        type: 'Normal',
        reason: 'Scheduled',
        message: 'Successfully assigned default/web to node-1',
        eventTime: micro(5),
        reportingComponent: 'default-scheduler',
        reportingInstance: 'default-scheduler-cp-1',
        source: {},
      },
      cells: ['5s', 'Normal', 'Scheduled', 'pod/web', '', 'default-scheduler, default-scheduler-cp-1', 'Successfully assigned default/web to node-1', '5s', 1, 'web.17f2'],
    },
    {
      name: 'series overrides last seen and count',
      ev: {
        metadata: { name: 'web.17f3', namespace: 'default' },
        involvedObject: pod,
        type: 'Warning',
        reason: 'Unhealthy',
        message: 'Readiness probe failed',
        eventTime: micro(3600),
        series: { count: 40, lastObservedTime: micro(61) },
        reportingComponent: 'kubelet',
      },
      cells: ['61s', 'Warning', 'Unhealthy', 'pod/web', '', 'kubelet', 'Readiness probe failed', '60m', 40, 'web.17f3'],
    },
    {
      name: 'no times at all, object without a name',
      ev: { metadata: { name: 'odd', namespace: 'default' }, involvedObject: { kind: 'Node' }, type: 'Normal', reason: 'Starting', count: 2 },
      cells: ['<unknown>', 'Normal', 'Starting', 'node', '', '', '', '<unknown>', 2, 'odd'],
    },
  ];
  for (const c of cases) assert.deepEqual(eventPrinter.print(stored(c.ev), NOW).cells, c.cells, c.name);
});

void test('events.k8s.io events print as their core form', () => {
  const cases: { name: string; ev: EventsV1Event; cells: unknown[] }[] = [
    {
      name: 'new-style singleton',
      ev: {
        metadata: { name: 'web.1', namespace: 'default' },
        eventTime: micro(12),
        regarding: pod,
        type: 'Normal',
        reason: 'Pulled',
        action: 'Pulling',
        note: 'Container image "nginx" already present on machine',
        reportingController: 'kubelet',
        reportingInstance: 'node-1',
      },
      cells: ['12s', 'Normal', 'Pulled', 'pod/web', '', 'kubelet, node-1', 'Container image "nginx" already present on machine', '12s', 1, 'web.1'],
    },
    {
      name: 'converted from a core event with deprecated fields',
      ev: {
        metadata: { name: 'web.2', namespace: 'default' },
        eventTime: micro(900),
        regarding: { ...pod, fieldPath: 'spec.containers{app}' },
        type: 'Warning',
        reason: 'BackOff',
        note: 'Back-off pulling image',
        deprecatedSource: { component: 'kubelet', host: 'node-2' },
        deprecatedFirstTimestamp: ago(300),
        deprecatedLastTimestamp: ago(20),
        deprecatedCount: 6,
      },
      cells: ['20s', 'Warning', 'BackOff', 'pod/web', 'spec.containers{app}', 'kubelet, node-2', 'Back-off pulling image', '5m', 6, 'web.2'],
    },
  ];
  for (const c of cases) assert.deepEqual(eventsV1Printer.print(stored(c.ev), NOW).cells, c.cells, c.name);
});
