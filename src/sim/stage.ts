// Stages: simulated behaviour as data, in the spirit of kwok. A stage says which objects it applies to
// (a selector over their fields), how long to wait (a delay plus uniform jitter), and what a kubelet
// would then do (steps: patch the status, record events, delete with grace 0). The first stage in
// load order whose selector matches an object is the one played for it; once its steps have
// changed the object, the next matching stage takes over. Files are JSON or YAML: a stage, a list of
// stages, or { stages: [...] }; a stage may `extends` another by name to reuse its delay and steps.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { compilePath, ExprError, type Env, type PathExpr } from './expr.js';
import { compileTemplate, type Template } from './template.js';
import nodeStages from './stages/node.json' with { type: 'json' };
import podStages from './stages/pod.json' with { type: 'json' };
import podSlowStart from './stages/pod-slow-start.json' with { type: 'json' };
import podCrashLoop from './stages/pod-crash-loop.json' with { type: 'json' };
import podImagePullError from './stages/pod-image-pull-error.json' with { type: 'json' };

export type SimResource = 'pods' | 'nodes';

export type Operator = 'In' | 'NotIn' | 'AllIn' | 'Exists' | 'DoesNotExist';

export interface SelectorRequirement {
  /** A path (see expr.ts); every value it reaches is compared. */
  key: string;
  operator: Operator;
  values?: string[];
}

/** A stage as written in a file. */
export interface StageSpec {
  name: string;
  resource?: SimResource;
  description?: string;
  extends?: string;
  selector?: SelectorRequirement[];
  /** Wait ms, plus a uniformly random part below jitterMs; either may be a template ("{{ expr }}", "$if"). */
  delay?: { ms?: unknown; jitterMs?: unknown };
  steps?: StepSpec[];
}

export type StepSpec = { patchStatus: unknown } | { event: unknown } | { delete: boolean };

export type Step = { kind: 'patchStatus'; template: Template } | { kind: 'event'; template: Template } | { kind: 'delete' };

export interface Stage {
  readonly name: string;
  readonly resource: SimResource;
  matches(env: Env): boolean;
  /** The wait before the steps, in ms; random() is uniform in [0, 1). */
  delay(env: Env, random: () => number): number;
  readonly steps: readonly Step[];
}

/**
 * The default set, in precedence order: node behaviour, then the failure scenarios (selected by the
 * pod annotation sim.kite.dev/scenario: slow-start, crash-loop or image-pull-error), then the plain
 * kubelet lifecycle that every other pod follows.
 */
export const defaultStageSpecs: readonly StageSpec[] = [
  ...(nodeStages as StageSpec[]),
  ...(podSlowStart as StageSpec[]),
  ...(podCrashLoop as StageSpec[]),
  ...(podImagePullError as StageSpec[]),
  ...(podStages as StageSpec[]),
];

const operators: readonly Operator[] = ['In', 'NotIn', 'AllIn', 'Exists', 'DoesNotExist'];

/** How a reached value compares with a selector's strings: lists of strings (a command) join with spaces. */
function comparable(v: unknown): string {
  if (Array.isArray(v)) return v.map(comparable).join(' ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function compileRequirement(r: SelectorRequirement, stage: string): (env: Env) => boolean {
  if (!operators.includes(r.operator)) throw new ExprError(`stage ${stage}: unknown operator ${JSON.stringify(r.operator)}`);
  const path: PathExpr = compilePath(r.key);
  const values = new Set(r.values ?? []);
  const needsValues = r.operator === 'In' || r.operator === 'NotIn' || r.operator === 'AllIn';
  if (needsValues && values.size === 0) throw new ExprError(`stage ${stage}: ${r.operator} on ${r.key} needs values`);
  switch (r.operator) {
    case 'Exists':
      return (env) => path(env).length > 0;
    case 'DoesNotExist':
      return (env) => path(env).length === 0;
    case 'In':
      return (env) => path(env).some((v) => values.has(comparable(v)));
    case 'NotIn':
      return (env) => !path(env).some((v) => values.has(comparable(v)));
    case 'AllIn':
      return (env) => {
        const found = path(env);
        return found.length > 0 && found.every((v) => values.has(comparable(v)));
      };
  }
}

function compileDelayPart(v: unknown, stage: string): Template {
  if (v === undefined) return () => 0;
  const t = compileTemplate(v);
  return (env) => {
    const n = Number(t(env));
    if (!Number.isFinite(n)) throw new ExprError(`stage ${stage}: delay ${JSON.stringify(v)} is not a number`);
    return n;
  };
}

function compileStep(s: StepSpec, stage: string): Step {
  if ('patchStatus' in s) return { kind: 'patchStatus', template: compileTemplate(s.patchStatus) };
  if ('event' in s) return { kind: 'event', template: compileTemplate(s.event) };
  if ('delete' in s && s.delete === true) return { kind: 'delete' };
  throw new ExprError(`stage ${stage}: a step is one of patchStatus, event, delete: true`);
}

function compileStage(spec: StageSpec): Stage {
  const name = spec.name;
  const resource = spec.resource ?? 'pods';
  if (resource !== 'pods' && resource !== 'nodes') throw new ExprError(`stage ${name}: resource must be pods or nodes`);
  const requirements = (spec.selector ?? []).map((r) => compileRequirement(r, name));
  const ms = compileDelayPart(spec.delay?.ms, name);
  const jitter = compileDelayPart(spec.delay?.jitterMs, name);
  return {
    name,
    resource,
    matches: (env) => requirements.every((r) => r(env)),
    delay: (env, random) => Math.max(0, ms(env) as number) + Math.floor(random() * Math.max(0, jitter(env) as number)),
    steps: (spec.steps ?? []).map((s) => compileStep(s, name)),
  };
}

/** Resolves `extends` (the base's fields, then the stage's own) and compiles every stage, in order. */
export function compileStages(specs: readonly StageSpec[]): Stage[] {
  const byName = new Map<string, StageSpec>();
  for (const s of specs) {
    if (!s || typeof s.name !== 'string' || !s.name) throw new ExprError(`every stage needs a name: ${JSON.stringify(s)}`);
    if (byName.has(s.name)) throw new ExprError(`stage ${s.name} is defined twice`);
    byName.set(s.name, s);
  }
  const resolve = (s: StageSpec, seen: string[]): StageSpec => {
    if (!s.extends) return s;
    if (seen.includes(s.extends)) throw new ExprError(`stage ${s.name}: extends cycle ${[...seen, s.extends].join(' → ')}`);
    const base = byName.get(s.extends);
    if (!base) throw new ExprError(`stage ${s.name} extends unknown stage ${s.extends}`);
    return { ...resolve(base, [...seen, s.extends]), ...s };
  };
  return specs.map((s) => compileStage(resolve(s, [s.name])));
}

function specsOfDocument(doc: unknown, file: string): StageSpec[] {
  if (Array.isArray(doc)) return doc as StageSpec[];
  if (doc && typeof doc === 'object') {
    const stages = (doc as { stages?: unknown }).stages;
    if (Array.isArray(stages)) return stages as StageSpec[];
    return [doc as StageSpec];
  }
  if (doc === null || doc === undefined) return [];
  throw new ExprError(`${file}: expected a stage, a list of stages or { stages: [...] }`);
}

function readStageFile(file: string): StageSpec[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8'));
  const specs: StageSpec[] = [];
  for (const d of docs) {
    if (d.errors.length > 0) throw new ExprError(`${file}: ${d.errors[0]!.message}`);
    specs.push(...specsOfDocument(d.toJSON(), file));
  }
  return specs;
}

const stageExtensions = new Set(['.json', '.yaml', '.yml']);

/**
 * The stages named by --stages: comma-separated files or directories (their .json/.yaml/.yml files in
 * name order); the word "default" stands for the built-in set, so "default,mine.yaml" extends it.
 */
export function loadStageSpecs(sources: string): StageSpec[] {
  const specs: StageSpec[] = [];
  for (const source of sources.split(',').map((s) => s.trim()).filter(Boolean)) {
    if (source === 'default') {
      specs.push(...defaultStageSpecs);
    } else if (statSync(source).isDirectory()) {
      for (const f of readdirSync(source).sort()) if (stageExtensions.has(extname(f))) specs.push(...readStageFile(join(source, f)));
    } else {
      specs.push(...readStageFile(source));
    }
  }
  return specs;
}
