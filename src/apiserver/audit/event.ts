// The audit.k8s.io/v1 Event, as upstream's apis/audit/v1 types: one per stage of a request the
// policy audits, with the request and response bodies at the levels that carry them.
import type { Level, Stage } from './policy.js';

export interface AuditUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** metav1.Status as the event carries it: the code, and for failures upstream's bounded fields. */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** metav1.MicroTime. */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

const fieldOrder: readonly (keyof AuditEvent)[] = [
  'kind', 'apiVersion', 'level', 'auditID', 'stage', 'requestURI', 'verb', 'user', 'impersonatedUser', 'sourceIPs', 'userAgent', 'objectRef',
  'responseStatus', 'requestObject', 'responseObject', 'requestReceivedTimestamp', 'stageTimestamp', 'annotations',
];

/** The event with its fields in upstream's order (Go's encoder writes struct fields in declaration order). */
export function inFieldOrder(event: AuditEvent): AuditEvent {
  const ordered: Record<string, unknown> = {};
  for (const k of fieldOrder) if (event[k] !== undefined) ordered[k] = event[k];
  return ordered as unknown as AuditEvent;
}

/** Level a is at least level b (None < Metadata < Request < RequestResponse). */
export function levelAtLeast(a: Level, b: Level): boolean {
  const order: Record<Level, number> = { None: 0, Metadata: 1, Request: 2, RequestResponse: 3 };
  return order[a] >= order[b];
}
