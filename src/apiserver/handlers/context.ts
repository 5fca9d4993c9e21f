// What every resource handler gets: the parsed request, who made it, and the resource's registry.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceInfo } from '../../api/resources.js';
import type { StoredObject } from '../../api/meta.js';
import { apiVersionOf } from '../../api/meta.js';
import type { UserInfo } from '../authn/user.js';
import type { RequestInfo } from '../http/requestinfo.js';
import type { Output } from '../http/negotiation.js';
import type { Registry } from '../registry/registry.js';
import type { Registries } from '../registry/registries.js';
import type { Clock } from '../../util/clock.js';
import type { UpgradeRequest } from '../../streaming/upgrade.js';
import { badRequest } from '../../api/errors.js';
import { queryBool, queryInt64 } from '../../api/query.js';
import type { PodRequestTrace } from '../timeline/trace.js';

export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  info: RequestInfo;
  user: UserInfo;
  resource: ResourceInfo;
  registry: Registry;
  registries: Registries;
  output: Output;
  clock: Clock;
  /** The connection of an upgrade request (exec, attach, portforward). */
  upgrade?: UpgradeRequest;
  /** Adds an audit annotation to the request's events (RequestContext.annotate). */
  annotate: (key: string, value: string) => void;
  /** A pod write's timeline steps (RequestContext.timeline). */
  timeline?: PodRequestTrace;
}

export function query(r: Pick<ResourceRequest, 'url'>, name: string): string | undefined {
  return r.url.searchParams.get(name) ?? undefined;
}

/** A boolean option as upstream's parameter codec reads it (`True`, `1`, `yes` are true); absent is false. */
export function boolQuery(r: ResourceRequest, name: string): boolean {
  return optionalBoolQuery(r, name) ?? false;
}

/** A *bool option: undefined when absent. */
export function optionalBoolQuery(r: ResourceRequest, name: string): boolean | undefined {
  const v = query(r, name);
  return v === undefined ? undefined : queryBool(v);
}

/** An int64 option; a value Go's strconv.ParseInt refuses is a 400 with its message. */
export function intQuery(r: ResourceRequest, name: string): number | undefined {
  const v = query(r, name);
  if (v === undefined) return undefined;
  try {
    return queryInt64(v);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

/** dryRun=All is the only value upstream accepts. */
export function dryRunOf(values: string[]): boolean {
  for (const v of values) if (v !== 'All') throw badRequest(`Invalid dry run value: ${v}`);
  return values.length > 0;
}

/** The JSON of served objects: the watch cache hands every watcher of an event, and the write's own response, the same instance. */
const serialized = new WeakMap<object, string>();

/** obj with its type meta as JSON, serialized once however many watchers and responses send it. */
export function objectJson(resource: ResourceInfo, obj: StoredObject): string {
  let json = serialized.get(obj);
  if (json === undefined) {
    json = JSON.stringify(withTypeMeta(resource, obj));
    serialized.set(obj, json);
  }
  return json;
}

/** Every object leaves the server with its kind and apiVersion. */
export function withTypeMeta(resource: ResourceInfo, obj: StoredObject): StoredObject {
  if (obj.kind === resource.kind && obj.apiVersion === apiVersionOf(resource.group, resource.version)) return obj;
  const { apiVersion: _a, kind: _k, ...rest } = obj;
  return { apiVersion: apiVersionOf(resource.group, resource.version), kind: resource.kind, ...rest } as StoredObject;
}
