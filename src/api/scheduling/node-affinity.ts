// Node selector matching as component-helpers' nodeaffinity: terms are ORed, the requirements of a
// term ANDed; an empty or invalid term matches nothing; matchFields supports metadata.name only.
import type { NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm } from 'kubernetes-types/core/v1.js';
import { newRequirement, requirementMatches, selectorFromSet, type Operator, type Requirement, type Selector } from '../labels.js';
import type { Node, Pod } from '../types.js';

const operators: Record<string, Operator | undefined> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!', Gt: 'gt', Lt: 'lt' };

type Matcher = (node: Node) => boolean;

function labelRequirement(r: NodeSelectorRequirement): Requirement {
  const op = operators[r.operator];
  if (!op) throw new Error(`"${r.operator}" is not a valid node selector operator`);
  return newRequirement(r.key, op, r.values ?? []);
}

function fieldMatcher(r: NodeSelectorRequirement): Matcher {
  if (r.key !== 'metadata.name') throw new Error(`"${r.key}" is not a valid field selector key`);
  if ((r.values ?? []).length !== 1) throw new Error(`unexpected number of value (${(r.values ?? []).length}) for node field selector operator "${r.operator}"`);
  const value = r.values![0];
  if (r.operator === 'In') return (n) => n.metadata?.name === value;
  if (r.operator === 'NotIn') return (n) => n.metadata?.name !== value;
  throw new Error(`"${r.operator}" is not a valid node field selector operator`);
}

/** A term as one matcher; undefined when it can never match (empty or invalid). */
function termMatcher(t: NodeSelectorTerm): Matcher | undefined {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return undefined;
  try {
    const reqs = exprs.map(labelRequirement);
    const fieldMatchers = fields.map(fieldMatcher);
    return (node) => {
      const labels = node.metadata?.labels ?? {};
      for (const r of reqs) if (!requirementMatches(r, labels)) return false;
      for (const f of fieldMatchers) if (!f(node)) return false;
      return true;
    };
  } catch {
    return undefined;
  }
}

/** A NodeSelector (ORed terms) as a matcher. */
export function nodeSelectorMatcher(ns: NodeSelector): Matcher {
  const terms = ns.nodeSelectorTerms.map(termMatcher).filter((m): m is Matcher => m !== undefined);
  return (node) => terms.some((m) => m(node));
}

/** The pod's hard node constraints: spec.nodeSelector and required node affinity (upstream's RequiredNodeAffinity). */
export class RequiredNodeAffinity {
  private readonly selector?: Selector;
  private readonly affinity?: Matcher;

  constructor(pod: Pod) {
    const sel = pod.spec?.nodeSelector;
    if (sel && Object.keys(sel).length > 0) this.selector = selectorFromSet(sel);
    const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    if (req) this.affinity = nodeSelectorMatcher(req);
  }

  match(node: Node): boolean {
    if (this.selector && !this.selector.matches(node.metadata?.labels)) return false;
    return this.affinity ? this.affinity(node) : true;
  }
}

/** Weighted preferred terms; score(node) sums the weights of the terms the node matches. */
export class PreferredSchedulingTerms {
  private readonly terms: { match: Matcher; weight: number }[] = [];

  constructor(terms: readonly PreferredSchedulingTerm[]) {
    for (const t of terms) {
      if (t.weight === 0) continue;
      const m = termMatcher(t.preference);
      if (m) this.terms.push({ match: m, weight: t.weight });
    }
  }

  score(node: Node): number {
    let s = 0;
    for (const t of this.terms) if (t.match(node)) s += t.weight;
    return s;
  }
}
