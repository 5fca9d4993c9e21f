// `--audit-policy-file`: upstream's audit.k8s.io/v1 Policy (YAML or JSON). Its rules are tried in
// order and the first that matches the request sets the level and the stages left out; no match is
// level None. Matching is upstream's policy checker: users, userGroups and verbs narrow every rule;
// a rule with resources or namespaces matches resource requests only, one with nonResourceURLs
// matches the others only, and `pods/log`, `*/status`, `pods/*` and resourceNames narrow resources.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { getOwn } from '../../util/own.js';
import type { UserInfo } from '../authn/user.js';
import type { RequestInfo } from '../http/requestinfo.js';

export const levels = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof levels)[number];
/**
 * Adds an audit annotation to the request's events (upstream's AddAnnotationWithLevel): kept only when
 * the request is audited at `level` (default Metadata) or above; the first value of a key stays.
 */
export type AddAuditAnnotation = (key: string, value: string, level?: Level) => void;
export const stages = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof stages)[number];

interface GroupResources {
  group: string;
  resources: readonly string[];
  resourceNames: readonly string[];
}

interface PolicyRule {
  level: Level;
  users: readonly string[];
  userGroups: readonly string[];
  verbs: readonly string[];
  resources: readonly GroupResources[];
  namespaces: readonly string[];
  nonResourceURLs: readonly string[];
  omitStages: readonly Stage[];
  omitManagedFields?: boolean;
}

/** What the policy asks of one request (upstream's RequestAuditConfig). */
export interface RequestAuditConfig {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

export class Policy {
  constructor(
    private readonly rules: readonly PolicyRule[],
    private readonly omitStages: readonly Stage[],
    private readonly omitManagedFields: boolean,
  ) {}

  /** The level and omitted stages for a request by user; level None when no rule matches. */
  evaluate(user: UserInfo, info: RequestInfo): RequestAuditConfig {
    const rule = this.rules.find((r) => ruleMatches(r, user, info));
    if (!rule) return { level: 'None', omitStages: new Set(), omitManagedFields: false };
    return {
      level: rule.level,
      omitStages: new Set([...this.omitStages, ...rule.omitStages]),
      omitManagedFields: rule.omitManagedFields ?? this.omitManagedFields,
    };
  }
}

function ruleMatches(r: PolicyRule, user: UserInfo, info: RequestInfo): boolean {
  if (r.users.length > 0 && !r.users.includes(user.name)) return false;
  if (r.userGroups.length > 0 && !user.groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(info.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return resourceMatches(r, info);
  if (r.nonResourceURLs.length > 0) return !info.isResourceRequest && r.nonResourceURLs.some((u) => pathMatches(u, info.path));
  return true;
}

function resourceMatches(r: PolicyRule, info: RequestInfo): boolean {
  if (!info.isResourceRequest) return false;
  if (r.namespaces.length > 0 && !r.namespaces.includes(info.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return r.resources.some((gr) => {
    if (gr.group !== info.apiGroup) return false;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(info.name)) return false;
    return gr.resources.some(
      (res) => res === combined || res === '*' || (res.startsWith('*/') && info.subresource === res.slice(2)) || (res.endsWith('/*') && info.resource === res.slice(0, -2)),
    );
  });
}

/** A nonResourceURLs entry: the path itself, or a prefix ending in `*`. */
function pathMatches(pattern: string, path: string): boolean {
  return pattern === '*' || pattern === path || (pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1)));
}

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

function strings(v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${path}: Invalid value: expected a list of strings`);
  return v as string[];
}

function stageList(v: unknown, path: string): Stage[] {
  return strings(v, path).map((s, i) => {
    if (!(stages as readonly string[]).includes(s)) throw new Error(`${path}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${stages.map((x) => `"${x}"`).join(', ')}`);
    return s as Stage;
  });
}

function optionalBool(v: unknown, path: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new Error(`${path}: Invalid value: expected true or false`);
  return v;
}

function ruleOf(v: unknown, path: string): PolicyRule {
  if (!isObject(v)) throw new Error(`${path}: Invalid value: expected a rule`);
  const level = getOwn(v, 'level');
  if (typeof level !== 'string' || !(levels as readonly string[]).includes(level)) {
    throw new Error(`${path}.level: ${level === undefined ? 'Required value' : `Unsupported value: ${JSON.stringify(level)}`}: supported values: ${levels.map((l) => `"${l}"`).join(', ')}`);
  }
  const resourcesRaw = getOwn(v, 'resources') ?? [];
  if (!Array.isArray(resourcesRaw)) throw new Error(`${path}.resources: Invalid value: expected a list`);
  const resources = resourcesRaw.map((gr: unknown, i): GroupResources => {
    const at = `${path}.resources[${i}]`;
    if (!isObject(gr)) throw new Error(`${at}: Invalid value: expected {group, resources, resourceNames}`);
    const group = getOwn(gr, 'group') ?? '';
    if (typeof group !== 'string') throw new Error(`${at}.group: Invalid value: expected a string`);
    const res = strings(getOwn(gr, 'resources'), `${at}.resources`);
    const resourceNames = strings(getOwn(gr, 'resourceNames'), `${at}.resourceNames`);
    if (resourceNames.length > 0 && res.length === 0) throw new Error(`${at}.resourceNames: Invalid value: resourceNames require a non-empty resources list`);
    return { group, resources: res, resourceNames };
  });
  const rule: PolicyRule = {
    level: level as Level,
    users: strings(getOwn(v, 'users'), `${path}.users`),
    userGroups: strings(getOwn(v, 'userGroups'), `${path}.userGroups`),
    verbs: strings(getOwn(v, 'verbs'), `${path}.verbs`),
    resources,
    namespaces: strings(getOwn(v, 'namespaces'), `${path}.namespaces`),
    nonResourceURLs: strings(getOwn(v, 'nonResourceURLs'), `${path}.nonResourceURLs`),
    omitStages: stageList(getOwn(v, 'omitStages'), `${path}.omitStages`),
    omitManagedFields: optionalBool(getOwn(v, 'omitManagedFields'), `${path}.omitManagedFields`),
  };
  if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
    throw new Error(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  return rule;
}

/** Parses and checks a Policy document (audit.k8s.io/v1, kind Policy). */
export function parsePolicy(source: string): Policy {
  let doc: unknown;
  try {
    doc = parse(source);
  } catch (err) {
    throw new Error(`failed decoding audit policy: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  if (!isObject(doc) || getOwn(doc, 'kind') !== 'Policy' || getOwn(doc, 'apiVersion') !== 'audit.k8s.io/v1') {
    throw new Error('failed decoding audit policy: expected kind Policy of apiVersion audit.k8s.io/v1');
  }
  const rulesRaw = getOwn(doc, 'rules');
  if (!Array.isArray(rulesRaw)) throw new Error('rules: Invalid value: expected a list of rules');
  const rules = rulesRaw.map((r: unknown, i) => ruleOf(r, `rules[${i}]`));
  return new Policy(rules, stageList(getOwn(doc, 'omitStages'), 'omitStages'), optionalBool(getOwn(doc, 'omitManagedFields'), 'omitManagedFields') ?? false);
}

export async function loadPolicy(path: string): Promise<Policy> {
  return parsePolicy(await readFile(path, 'utf8'));
}
