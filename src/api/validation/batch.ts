// batch/v1 Job validation as upstream 1.33's pkg/apis/batch/validation with the options its Job
// strategy passes (ElasticIndexedJob and JobManagedBy on, prefixed labels required unless the old
// Job predates them, scheduling directives mutable while a never-started Job is suspended).
import { duplicate, invalid, notSupported, omitValue, Path, rawValue, required, tooLong, tooMany, type FieldError } from '../field.js';
import { labelSelectorAsSelector } from '../labels.js';
import { arr, deepEqual, isObj, str, strMap, validateImmutable, validateLabelSelector, validateNonnegative, validateObjectMeta, validateObjectMetaUpdate, validateQualifiedName, goLabelSelector, type Obj } from './meta.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, nameIsDNSSubdomain, regexError } from './names.js';
import { validatePodTemplateSpec } from './podspec.js';

const maxParallelismForIndexedJob = 100_000;
const maxFailedIndexesForIndexedJob = 100_000;
const completionsSoftLimit = 100_000;
const parallelismLimitForHighCompletions = 10_000;
const maxFailedIndexesLimitForHighCompletions = 10_000;
const maxPodFailurePolicyRules = 20;
const maxPodFailurePolicyOnExitCodesValues = 255;
const maxPodFailurePolicyOnPodConditionsPatterns = 20;
const maxManagedByLength = 63;
const maxSuccessPolicySucceededIndexesLength = 64 * 1024;
const maxSuccessPolicyRules = 20;

const podFailurePolicyActions = ['Count', 'FailIndex', 'FailJob', 'Ignore'];
const exitCodesOperators = ['In', 'NotIn'];
const conditionStatuses = ['False', 'True', 'Unknown'];
const podReplacementPolicies = ['Failed', 'TerminatingOrFailed'];

export const jobNameLabel = 'batch.kubernetes.io/job-name';
export const controllerUidLabel = 'batch.kubernetes.io/controller-uid';
const legacyJobNameLabel = 'job-name';
const legacyControllerUidLabel = 'controller-uid';

const specPath = Path.root('spec');
const statusPath = Path.root('status');
const spec = (o: Obj): Obj => (isObj(o.spec) ? o.spec : {});
const status = (o: Obj): Obj => (isObj(o.status) ? o.status : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
/** Go's %q of a string slice, as sets.List renders in "valid values" details. */
const goQuotedList = (vs: string[]) => `[${vs.map((v) => JSON.stringify(v)).join(' ')}]`;

interface JobOptions {
  requirePrefixedLabels: boolean;
  allowMutableSchedulingDirectives: boolean;
}

/** apivalidation.ValidateHasLabel. */
function validateHasLabel(meta: Obj, p: Path, key: string, expected: string): FieldError[] {
  const labels = strMap(meta.labels);
  const lp = p.child('labels').key(key);
  if (!(key in labels)) return [required(lp, expected)];
  return labels[key] === expected ? [] : [invalid(lp, labels, `must be '${expected}'`)];
}

/** validateGeneratedSelector: without manualSelector the template carries the Job's labels and the selector selects them. */
function validateGeneratedSelector(job: Obj, requirePrefixed: boolean): FieldError[] {
  const s = spec(job);
  if (s.manualSelector === true || s.selector == null) return [];
  const meta = isObj(job.metadata) ? job.metadata : {};
  const uid = str(meta.uid);
  const name = str(meta.name);
  const errs: FieldError[] = [];
  if (uid === '') errs.push(required(Path.root('metadata').child('uid'), ''));
  const tp = specPath.child('template', 'metadata');
  const tmeta = isObj(s.template?.metadata) ? s.template.metadata : {};
  const expected: Record<string, string> = {};
  errs.push(...validateHasLabel(tmeta, tp, legacyControllerUidLabel, uid), ...validateHasLabel(tmeta, tp, legacyJobNameLabel, name));
  if (requirePrefixed) {
    errs.push(...validateHasLabel(tmeta, tp, controllerUidLabel, uid), ...validateHasLabel(tmeta, tp, jobNameLabel, name));
    expected[controllerUidLabel] = uid;
    expected[jobNameLabel] = name;
  }
  expected[legacyControllerUidLabel] = uid;
  expected[legacyJobNameLabel] = name;
  const selector = parseSelector(s.selector);
  if (selector && !selector.matches(expected)) errs.push(invalid(specPath.child('selector'), rawValue(goLabelSelector(s.selector)), '`selector` not auto-generated'));
  return errs;
}

function parseSelector(sel: unknown) {
  try {
    return labelSelectorAsSelector(isObj(sel) ? sel : undefined);
  } catch {
    return undefined;
  }
}

const httpPathFmt = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

/** apimachinery's IsDomainPrefixedPath. */
function validateDomainPrefixedPath(value: string, p: Path): FieldError[] {
  if (value === '') return [required(p, '')];
  const slash = value.indexOf('/');
  const host = slash < 0 ? '' : value.slice(0, slash);
  const path = slash < 0 ? '' : value.slice(slash + 1);
  if (host === '' || path === '') return [invalid(p, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = dns1123SubdomainErrors(host).map((m) => invalid(p, host, m));
  if (!new RegExp(`^${httpPathFmt}$`).test(path)) errs.push(invalid(p, path, regexError('Invalid path', httpPathFmt)));
  return errs;
}

/** parseIndexInterval: "x" or "x-y", each below completions, x < y. */
function parseIndexInterval(interval: string, completions: number): [number, number] | string {
  const limits = interval.split('-');
  if (limits.length > 2) return `the fragment ${JSON.stringify(interval)} violates the requirement that an index interval can have at most two parts separated by '-'`;
  const parse = (s: string) => (/^[+-]?[0-9]+$/.test(s) ? parseInt(s, 10) : undefined);
  const x = parse(limits[0]!);
  if (x === undefined) return `cannot convert string to integer for index: ${JSON.stringify(limits[0])}`;
  if (x >= completions) return `too large index: ${JSON.stringify(limits[0])}`;
  if (limits.length === 1) return [x, x];
  const y = parse(limits[1]!);
  if (y === undefined) return `cannot convert string to integer for index: ${JSON.stringify(limits[1])}`;
  if (y >= completions) return `too large index: ${JSON.stringify(limits[1])}`;
  if (x >= y) return `non-increasing order, previous: ${x}, current: ${y}`;
  return [x, y];
}

/** validateIndexesFormat: the count of indexes, or the parse error. */
export function validateIndexesFormat(indexes: string, completions: number): number | string {
  if (indexes === '') return 0;
  let last: number | undefined;
  let total = 0;
  for (const interval of indexes.split(',')) {
    const r = parseIndexInterval(interval, completions);
    if (typeof r === 'string') return r;
    if (last !== undefined && last >= r[0]) return `non-increasing order, previous: ${last}, current: ${r[0]}`;
    total += r[1] - r[0] + 1;
    last = r[1];
  }
  return total;
}

/** The first index in both lists (walking the sorted intervals), skipping intervals that do not parse. */
function failedOverlapsCompleted(completed: string, failed: string, completions: number): string | undefined {
  if (completed === '' || failed === '') return undefined;
  const parsed = (s: string) => s.split(',').map((i) => parseIndexInterval(i, completions)).filter((r): r is [number, number] => typeof r !== 'string');
  const cs = parsed(completed);
  const fs = parsed(failed);
  let ci = 0;
  let fi = 0;
  while (ci < cs.length && fi < fs.length) {
    const [cx, cy] = cs[ci]!;
    const [fx, fy] = fs[fi]!;
    if (cx <= fy && fx <= cy) return `failedIndexes and completedIndexes overlap at index: ${Math.max(cx, fx)}`;
    if (cx <= fx) ci++;
    else fi++;
  }
  return undefined;
}

function validatePodFailurePolicy(s: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const rules = arr(s.podFailurePolicy?.rules);
  const rulesPath = p.child('rules');
  if (rules.length > maxPodFailurePolicyRules) errs.push(tooMany(rulesPath, rules.length, maxPodFailurePolicyRules));
  const containerNames = new Set([...arr(s.template?.spec?.containers), ...arr(s.template?.spec?.initContainers)].map((c) => str(c?.name)));
  rules.forEach((rule, i) => errs.push(...validatePodFailurePolicyRule(s, isObj(rule) ? rule : {}, rulesPath.index(i), containerNames)));
  return errs;
}

function validatePodFailurePolicyRule(s: Obj, rule: Obj, p: Path, containerNames: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const action = str(rule.action);
  const ap = p.child('action');
  if (action === '') errs.push(required(ap, `valid values: ${goQuotedList(podFailurePolicyActions)}`));
  else if (action === 'FailIndex') {
    if (s.backoffLimitPerIndex == null) errs.push(invalid(ap, action, 'requires the backoffLimitPerIndex to be set'));
  } else if (!podFailurePolicyActions.includes(action)) errs.push(notSupported(ap, action, podFailurePolicyActions));
  const onExitCodes = isObj(rule.onExitCodes) ? rule.onExitCodes : undefined;
  const onPodConditions = arr(rule.onPodConditions);
  if (onExitCodes) errs.push(...validateOnExitCodes(onExitCodes, p.child('onExitCodes'), containerNames));
  if (onPodConditions.length > 0) errs.push(...validateOnPodConditions(onPodConditions, p.child('onPodConditions')));
  if (onExitCodes && onPodConditions.length > 0) errs.push(invalid(p, omitValue, 'specifying both OnExitCodes and OnPodConditions is not supported'));
  if (!onExitCodes && onPodConditions.length === 0) errs.push(invalid(p, omitValue, 'specifying one of OnExitCodes and OnPodConditions is required'));
  return errs;
}

function validateOnPodConditions(patterns: unknown[], p: Path): FieldError[] {
  const errs: FieldError[] = [];
  if (patterns.length > maxPodFailurePolicyOnPodConditionsPatterns) errs.push(tooMany(p, patterns.length, maxPodFailurePolicyOnPodConditionsPatterns));
  patterns.forEach((pattern, j) => {
    const pp = p.index(j);
    const pat = isObj(pattern) ? pattern : {};
    errs.push(...validateQualifiedName(str(pat.type), pp.child('type')));
    const st = str(pat.status);
    if (st === '') errs.push(required(pp.child('status'), `valid values: ${goQuotedList(conditionStatuses)}`));
    else if (!conditionStatuses.includes(st)) errs.push(notSupported(pp.child('status'), st, conditionStatuses));
  });
  return errs;
}

/** Go's %v of an []int32. */
const goInts = (vs: number[]) => rawValue(`[${vs.join(' ')}]`);

function validateOnExitCodes(req: Obj, p: Path, containerNames: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  const op = str(req.operator);
  if (op === '') errs.push(required(p.child('operator'), `valid values: ${goQuotedList(exitCodesOperators)}`));
  else if (!exitCodesOperators.includes(op)) errs.push(notSupported(p.child('operator'), op, exitCodesOperators));
  if (typeof req.containerName === 'string' && !containerNames.has(req.containerName)) {
    errs.push(invalid(p.child('containerName'), req.containerName, 'must be one of the container or initContainer names in the pod template'));
  }
  const values = arr(req.values).filter((v): v is number => typeof v === 'number');
  const vp = p.child('values');
  if (values.length === 0) errs.push(invalid(vp, goInts(values), 'at least one value is required'));
  else if (values.length > maxPodFailurePolicyOnExitCodesValues) errs.push(tooMany(vp, values.length, maxPodFailurePolicyOnExitCodesValues));
  const seen = new Set<number>();
  let ordered = true;
  values.forEach((v, j) => {
    if (op === 'In' && v === 0) errs.push(invalid(vp.index(j), v, 'must not be 0 for the In operator'));
    if (seen.has(v)) errs.push(duplicate(vp.index(j), v));
    else seen.add(v);
    if (j > 0 && values[j - 1]! > v) ordered = false;
  });
  if (!ordered) errs.push(invalid(vp, goInts(values), 'must be ordered'));
  return errs;
}

function validateSuccessPolicy(s: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  const rules = arr(s.successPolicy?.rules);
  const rulesPath = p.child('rules');
  if (rules.length === 0) errs.push(required(rulesPath, 'at least one rules must be specified when the successPolicy is specified'));
  if (rules.length > maxSuccessPolicyRules) errs.push(tooMany(rulesPath, rules.length, maxSuccessPolicyRules));
  const completions = num(s.completions) ?? 0;
  rules.forEach((r, i) => {
    const rule = isObj(r) ? r : {};
    const rp = rulesPath.index(i);
    if (rule.succeededCount == null && rule.succeededIndexes == null) errs.push(required(rp, 'at least one of succeededCount or succeededIndexes must be specified'));
    let total = 0;
    if (typeof rule.succeededIndexes === 'string') {
      const ip = rp.child('succeededIndexes');
      if (rule.succeededIndexes.length > maxSuccessPolicySucceededIndexesLength) errs.push(tooLong(ip, rule.succeededIndexes, maxSuccessPolicySucceededIndexesLength));
      const r = validateIndexesFormat(rule.succeededIndexes, completions);
      if (typeof r === 'string') errs.push(invalid(ip, rule.succeededIndexes, `error parsing succeededIndexes: ${r}`));
      else total = r;
    }
    if (typeof rule.succeededCount === 'number') {
      const cp = rp.child('succeededCount');
      errs.push(...validateNonnegative(rule.succeededCount, cp));
      if (rule.succeededCount > completions) {
        errs.push(invalid(cp, rule.succeededCount, `must be less than or equal to ${completions} (the number of specified completions)`));
      }
      if (rule.succeededIndexes != null && rule.succeededCount > total) {
        errs.push(invalid(cp, rule.succeededCount, `must be less than or equal to ${total} (the number of indexes in the specified succeededIndexes field)`));
      }
    }
  });
  return errs;
}

function validatePodReplacementPolicy(s: Obj, p: Path): FieldError[] {
  if (s.podReplacementPolicy == null) return [];
  const v = str(s.podReplacementPolicy);
  if (s.podFailurePolicy != null) return v === 'Failed' ? [] : [notSupported(p, v, ['Failed'])];
  return podReplacementPolicies.includes(v) ? [] : [notSupported(p, v, podReplacementPolicies)];
}

/** validateJobSpec: the rules a Job and a CronJob's job template share. */
export function validateJobSpecFields(s: Obj, p: Path): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of ['parallelism', 'completions', 'activeDeadlineSeconds', 'backoffLimit', 'ttlSecondsAfterFinished', 'backoffLimitPerIndex']) {
    errs.push(...validateNonnegative(s[k], p.child(k)));
  }
  const parallelism = num(s.parallelism);
  const completions = num(s.completions);
  const maxFailed = num(s.maxFailedIndexes);
  if (s.maxFailedIndexes != null) {
    errs.push(...validateNonnegative(s.maxFailedIndexes, p.child('maxFailedIndexes')));
    if (s.backoffLimitPerIndex == null) errs.push(required(p.child('backoffLimitPerIndex'), 'when maxFailedIndexes is specified'));
  }
  if (s.managedBy != null) {
    const managedBy = str(s.managedBy);
    errs.push(...validateDomainPrefixedPath(managedBy, p.child('managedBy')));
    if (managedBy.length > maxManagedByLength) errs.push(tooLong(p.child('managedBy'), managedBy, maxManagedByLength));
  }
  const mode = s.completionMode == null ? undefined : str(s.completionMode);
  if (mode !== undefined) {
    if (mode !== 'NonIndexed' && mode !== 'Indexed') errs.push(notSupported(p.child('completionMode'), mode, ['NonIndexed', 'Indexed']));
    if (mode === 'Indexed') {
      if (completions === undefined) errs.push(required(p.child('completions'), 'when completion mode is Indexed'));
      if (parallelism !== undefined && parallelism > maxParallelismForIndexedJob) {
        errs.push(invalid(p.child('parallelism'), parallelism, `must be less than or equal to ${maxParallelismForIndexedJob} when completion mode is Indexed`));
      }
      if (completions !== undefined && maxFailed !== undefined && maxFailed > completions) {
        errs.push(invalid(p.child('maxFailedIndexes'), maxFailed, 'must be less than or equal to completions'));
      }
      if (maxFailed !== undefined && maxFailed > maxFailedIndexesForIndexedJob) {
        errs.push(invalid(p.child('maxFailedIndexes'), maxFailed, `must be less than or equal to ${maxFailedIndexesForIndexedJob}`));
      }
      if (completions !== undefined && completions > completionsSoftLimit && s.backoffLimitPerIndex != null) {
        const high = `when completions are above ${completionsSoftLimit} and used with backoff limit per index`;
        if (maxFailed === undefined) errs.push(required(p.child('maxFailedIndexes'), `must be specified when completions is above ${completionsSoftLimit}`));
        if (parallelism !== undefined && parallelism > parallelismLimitForHighCompletions) {
          errs.push(invalid(p.child('parallelism'), parallelism, `must be less than or equal to ${parallelismLimitForHighCompletions} ${high}`));
        }
        if (maxFailed !== undefined && maxFailed > maxFailedIndexesLimitForHighCompletions) {
          errs.push(invalid(p.child('maxFailedIndexes'), maxFailed, `must be less than or equal to ${maxFailedIndexesLimitForHighCompletions} ${high}`));
        }
      }
    }
  }
  if (mode === undefined || mode === 'NonIndexed') {
    if (s.backoffLimitPerIndex != null) errs.push(invalid(p.child('backoffLimitPerIndex'), s.backoffLimitPerIndex, 'requires indexed completion mode'));
    if (s.maxFailedIndexes != null) errs.push(invalid(p.child('maxFailedIndexes'), s.maxFailedIndexes, 'requires indexed completion mode'));
  }
  if (s.podFailurePolicy != null) errs.push(...validatePodFailurePolicy(s, p.child('podFailurePolicy')));
  if (s.successPolicy != null) {
    if (mode !== 'Indexed') errs.push(invalid(p.child('successPolicy'), rawValue(JSON.stringify(s.successPolicy)), 'requires indexed completion mode'));
    else errs.push(...validateSuccessPolicy(s, p.child('successPolicy')));
  }
  errs.push(...validatePodReplacementPolicy(s, p.child('podReplacementPolicy')));
  errs.push(...validatePodTemplateSpec(s.template, p.child('template')));
  const restartPolicy = str(s.template?.spec?.restartPolicy);
  const rp = p.child('template', 'spec', 'restartPolicy');
  if (restartPolicy === 'Always' || restartPolicy === '') errs.push(required(rp, 'valid values: "OnFailure", "Never"'));
  else if (restartPolicy !== 'OnFailure' && restartPolicy !== 'Never') errs.push(notSupported(rp, restartPolicy, ['OnFailure', 'Never']));
  else if (s.podFailurePolicy != null && restartPolicy !== 'Never') errs.push(invalid(rp, restartPolicy, 'only "Never" is supported when podFailurePolicy is specified'));
  return errs;
}

/** ValidateJobSpec: the shared rules, a valid selector, and a template it selects. */
function validateJobSpec(s: Obj): FieldError[] {
  const errs = validateJobSpecFields(s, specPath);
  if (s.selector == null) errs.push(required(specPath.child('selector'), ''));
  else errs.push(...validateLabelSelector(s.selector, specPath.child('selector')));
  const selector = s.selector == null ? undefined : parseSelector(s.selector);
  const labels = strMap(s.template?.metadata?.labels);
  if (selector && !selector.matches(labels)) errs.push(invalid(specPath.child('template', 'metadata', 'labels'), labels, '`selector` does not match template `labels`'));
  return errs;
}

function validateJobWith(job: Obj, opts: JobOptions): FieldError[] {
  const errs = validateObjectMeta(job.metadata, true, nameIsDNSSubdomain);
  errs.push(...validateGeneratedSelector(job, opts.requirePrefixedLabels));
  const s = spec(job);
  errs.push(...validateJobSpec(s));
  const completions = num(s.completions);
  if (s.completionMode === 'Indexed' && completions !== undefined && completions > 0) {
    // The controller names the pods' hostnames `<job>-<index>`: the largest must be a DNS label.
    const name = str(job.metadata?.name);
    const hostname = `${name}-${completions - 1}`;
    if (dns1123LabelErrors(hostname).length > 0) {
      errs.push(invalid(Path.root('metadata').child('name'), name, `will not able to create pod with invalid DNS label: ${hostname}`));
    }
  }
  return errs;
}

export const validateJob = (job: Obj): FieldError[] => validateJobWith(job, { requirePrefixedLabels: true, allowMutableSchedulingDirectives: false });

/** The template with what a suspended, never-started Job may change copied from the new one. */
function mutableSchedulingBase(template: Obj, old: Obj): Obj {
  const base = structuredClone(old);
  const tspec = isObj(template.spec) ? template.spec : {};
  base.spec = isObj(base.spec) ? base.spec : {};
  const oldAffinity = isObj(base.spec.affinity) ? base.spec.affinity : undefined;
  const newAffinity = isObj(tspec.affinity) ? tspec.affinity : undefined;
  if (!newAffinity && oldAffinity) {
    delete oldAffinity.nodeAffinity;
    if (Object.keys(oldAffinity).length === 0) delete base.spec.affinity;
  } else if (newAffinity && !oldAffinity) base.spec.affinity = newAffinity.nodeAffinity === undefined ? {} : { nodeAffinity: newAffinity.nodeAffinity };
  else if (newAffinity && oldAffinity) {
    if (newAffinity.nodeAffinity === undefined) delete oldAffinity.nodeAffinity;
    else oldAffinity.nodeAffinity = newAffinity.nodeAffinity;
  }
  for (const k of ['nodeSelector', 'tolerations', 'schedulingGates']) {
    if (tspec[k] === undefined) delete base.spec[k];
    else base.spec[k] = tspec[k];
  }
  base.metadata = isObj(base.metadata) ? base.metadata : {};
  for (const k of ['annotations', 'labels']) {
    if (template.metadata?.[k] === undefined) delete base.metadata[k];
    else base.metadata[k] = template.metadata[k];
  }
  return base;
}

function validateJobSpecUpdate(s: Obj, old: Obj, opts: JobOptions): FieldError[] {
  const errs = validateJobSpec(s);
  // Elastic Indexed Jobs: completions may change only together with parallelism.
  if (s.completionMode === 'Indexed') {
    if (!deepEqual(s.completions, old.completions) && s.completions != null && s.completions !== s.parallelism) {
      errs.push(invalid(specPath.child('completions'), s.completions, 'can only be modified in tandem with spec.parallelism'));
    }
  } else errs.push(...validateImmutable(s.completions, old.completions, specPath.child('completions')));
  errs.push(...validateImmutable(s.selector, old.selector, specPath.child('selector'), rawValue(goLabelSelector(s.selector))));
  const template = isObj(s.template) ? s.template : {};
  const oldTemplate = isObj(old.template) ? old.template : {};
  const base = opts.allowMutableSchedulingDirectives ? mutableSchedulingBase(template, oldTemplate) : oldTemplate;
  errs.push(...validateImmutable(template, base, specPath.child('template'), rawValue('core.PodTemplateSpec{...}')));
  for (const k of ['completionMode', 'podFailurePolicy', 'backoffLimitPerIndex', 'managedBy', 'successPolicy']) {
    errs.push(...validateImmutable(s[k], old[k], specPath.child(k), typeof s[k] === 'object' && s[k] !== null ? rawValue(JSON.stringify(s[k])) : s[k]));
  }
  return errs;
}

/** The Job strategy's ValidateUpdate: ValidateJob and ValidateJobUpdate with the old Job's options. */
export function validateJobUpdate(job: Obj, old: Obj): FieldError[] {
  const oldLabels = strMap(spec(old).template?.metadata?.labels);
  const opts: JobOptions = {
    requirePrefixedLabels: jobNameLabel in oldLabels && controllerUidLabel in oldLabels,
    allowMutableSchedulingDirectives: spec(old).suspend === true && status(old).startTime == null,
  };
  return [...validateJobWith(job, opts), ...validateObjectMetaUpdate(job.metadata, old.metadata), ...validateJobSpecUpdate(spec(job), spec(old), opts)];
}

// ---- status ----

const conditionTrue = (job: Obj, type: string) => arr(status(job).conditions).some((c) => c?.type === type && c?.status === 'True');
const isComplete = (job: Obj) => conditionTrue(job, 'Complete');
const isFailed = (job: Obj) => conditionTrue(job, 'Failed');
const isFinished = (job: Obj) => isComplete(job) || isFailed(job);
const isSuccessCriteriaMet = (job: Obj) => conditionTrue(job, 'SuccessCriteriaMet');
const isFailureTarget = (job: Obj) => conditionTrue(job, 'FailureTarget');

/** A metav1.Time as Go's %v prints it in an error. */
const goTime = (v: unknown) => {
  const t = new Date(str(v));
  if (isNaN(t.getTime())) return rawValue(str(v));
  return rawValue(t.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000 UTC').replace(/Z$/, ' +0000 UTC'));
};

/** validateJobStatus and ValidateJobStatusUpdate with the options upstream's status strategy computes (JobManagedBy on). */
export function validateJobStatusUpdate(job: Obj, old: Obj): FieldError[] {
  const errs = validateObjectMetaUpdate(job.metadata, old.metadata);
  const st = status(job);
  const ost = status(old);
  const s = spec(job);
  const changed = (k: string) => !deepEqual(st[k], ost[k]) || (st[k] == null) !== (ost[k] == null);
  const finishedChanged = isFinished(job) !== isFinished(old);
  const completeChanged = isComplete(job) !== isComplete(old);
  const failedChanged = isFailed(job) !== isFailed(old);
  const failureTargetChanged = isFailureTarget(job) !== isFailureTarget(old);
  const completedIndexesChanged = str(st.completedIndexes) !== str(ost.completedIndexes);
  const failedIndexesChanged = changed('failedIndexes');
  const activeChanged = (num(st.active) ?? 0) !== (num(ost.active) ?? 0);
  const startChanged = changed('startTime');
  const completionChanged = changed('completionTime');
  const indexed = s.completionMode === 'Indexed';
  const active = num(st.active) ?? 0;
  const finished = isFinished(job);
  const c = (k: string) => statusPath.child(k);
  const conditions = c('conditions');

  for (const k of ['active', 'succeeded', 'failed', 'ready', 'terminating']) errs.push(...validateNonnegative(st[k], c(k)));
  if (isObj(st.uncountedTerminatedPods)) {
    const up = c('uncountedTerminatedPods');
    const seen = new Set<string>();
    for (const list of ['succeeded', 'failed']) {
      arr(st.uncountedTerminatedPods[list]).forEach((uid, i) => {
        const p = up.child(list).index(i);
        const u = str(uid);
        if (u === '') errs.push(invalid(p, u, 'must not be empty'));
        else if (seen.has(u)) errs.push(duplicate(p, u));
        else seen.add(u);
      });
    }
  }
  if ((completeChanged || failedChanged) && isComplete(job) && isFailed(job)) errs.push(invalid(conditions, omitValue, 'cannot set Complete=True and Failed=true conditions'));
  if ((completeChanged || failureTargetChanged) && isComplete(job) && isFailureTarget(job)) {
    errs.push(invalid(conditions, omitValue, 'cannot set Complete=True and FailureTarget=true conditions'));
  }
  if ((completeChanged || completionChanged) && st.completionTime != null && !isComplete(job)) {
    errs.push(invalid(c('completionTime'), goTime(st.completionTime), 'cannot set completionTime when there is no Complete=True condition'));
  }
  if ((completeChanged || completionChanged) && st.completionTime == null && isComplete(job)) errs.push(required(c('completionTime'), 'completionTime is required for Complete jobs'));
  if ((startChanged || completionChanged) && st.startTime != null && st.completionTime != null && Date.parse(st.completionTime) < Date.parse(st.startTime)) {
    errs.push(invalid(c('completionTime'), goTime(st.completionTime), 'completionTime cannot be set before startTime'));
  }
  if ((failedChanged || failedIndexesChanged) && isFailed(job) && !isFailureTarget(job)) {
    errs.push(invalid(conditions, omitValue, 'cannot set Failed=True condition without the FailureTarget=true condition'));
  }
  if (completeChanged && isComplete(job) && !isSuccessCriteriaMet(job)) {
    errs.push(invalid(conditions, omitValue, 'cannot set Complete=True condition without the SuccessCriteriaMet=true condition'));
  }
  if ((finishedChanged || activeChanged) && active > 0 && finished) errs.push(invalid(c('active'), active, 'active>0 is invalid for finished job'));
  if ((finishedChanged || startChanged) && st.startTime == null && finished) errs.push(required(c('startTime'), 'startTime is required for finished job'));
  const uncounted = isObj(st.uncountedTerminatedPods) ? arr(st.uncountedTerminatedPods.failed).length + arr(st.uncountedTerminatedPods.succeeded).length : 0;
  if ((finishedChanged || changed('uncountedTerminatedPods')) && finished && uncounted > 0) {
    errs.push(invalid(c('uncountedTerminatedPods'), rawValue(JSON.stringify(st.uncountedTerminatedPods)), 'uncountedTerminatedPods needs to be empty for finished job'));
  }
  const completions = num(s.completions);
  if (completedIndexesChanged && completions !== undefined) {
    const r = validateIndexesFormat(str(st.completedIndexes), completions);
    if (typeof r === 'string') errs.push(invalid(c('completedIndexes'), str(st.completedIndexes), `error parsing completedIndexes: ${r}`));
  }
  if (failedIndexesChanged && completions !== undefined && s.backoffLimitPerIndex != null && st.failedIndexes != null) {
    const r = validateIndexesFormat(str(st.failedIndexes), completions);
    if (typeof r === 'string') errs.push(invalid(c('failedIndexes'), str(st.failedIndexes), `error parsing failedIndexes: ${r}`));
  }
  if (completedIndexesChanged && str(st.completedIndexes) !== '' && !indexed) {
    errs.push(invalid(c('completedIndexes'), str(st.completedIndexes), 'cannot set non-empty completedIndexes when non-indexed completion mode'));
  }
  if (failedIndexesChanged && s.backoffLimitPerIndex == null && st.failedIndexes != null) {
    errs.push(invalid(c('failedIndexes'), str(st.failedIndexes), 'cannot set non-null failedIndexes when backoffLimitPerIndex is null'));
  }
  if ((failedIndexesChanged || completedIndexesChanged) && completions !== undefined && st.failedIndexes != null) {
    const overlap = failedOverlapsCompleted(str(st.completedIndexes), str(st.failedIndexes), completions);
    if (overlap) errs.push(invalid(c('failedIndexes'), str(st.failedIndexes), overlap));
  }
  if ((finishedChanged || changed('terminating')) && (num(st.terminating) ?? 0) > 0 && finished) {
    errs.push(invalid(c('terminating'), st.terminating, 'terminating>0 is invalid for finished job'));
  }
  if ((changed('ready') || activeChanged) && num(st.ready) !== undefined && st.ready > active) errs.push(invalid(c('ready'), st.ready, 'cannot set more ready pods than active'));
  if (isSuccessCriteriaMet(job) && isFailed(job)) errs.push(invalid(conditions, omitValue, 'cannot set SuccessCriteriaMet=True and Failed=true conditions'));
  if (isSuccessCriteriaMet(job) && isFailureTarget(job)) errs.push(invalid(conditions, omitValue, 'cannot set SuccessCriteriaMet=True and FailureTarget=true conditions'));
  if (s.successPolicy != null && !isSuccessCriteriaMet(job) && isComplete(job)) {
    errs.push(invalid(conditions, omitValue, 'cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True'));
  }

  // The transitions.
  for (const type of ['Failed', 'Complete', 'FailureTarget']) {
    if (conditionTrue(old, type) && !conditionTrue(job, type)) errs.push(invalid(conditions, omitValue, `cannot disable the terminal ${type}=True condition`));
  }
  const failed = num(st.failed) ?? 0;
  if (failed < (num(ost.failed) ?? 0)) errs.push(invalid(c('failed'), failed, 'cannot decrease the failed counter'));
  const succeeded = num(st.succeeded) ?? 0;
  const scalable = indexed && deepEqual(s.completions, s.parallelism) && (s.completions == null) === (s.parallelism == null);
  if (!scalable && succeeded < (num(ost.succeeded) ?? 0)) errs.push(invalid(c('succeeded'), succeeded, 'cannot decrease the succeeded counter'));
  if (st.completionTime != null && ost.completionTime != null && st.completionTime !== ost.completionTime) {
    errs.push(invalid(c('completionTime'), goTime(st.completionTime), 'completionTime cannot be mutated'));
  }
  if (startChanged && ost.startTime != null && s.suspend !== true) errs.push(required(c('startTime'), 'startTime cannot be removed for unsuspended job'));
  if (isSuccessCriteriaMet(old) && !isSuccessCriteriaMet(job)) errs.push(invalid(conditions, omitValue, 'cannot disable the SuccessCriteriaMet=True condition'));
  if (isComplete(old) && !isSuccessCriteriaMet(old) && isSuccessCriteriaMet(job)) {
    errs.push(invalid(conditions, omitValue, 'cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions'));
  }
  return errs;
}
