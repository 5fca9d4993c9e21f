// From a metrics-based proposal to the replica count the controller sets, as upstream's
// horizontal.go: stabilization over recent recommendations (scale-down window 300 s by default,
// scale-up 0 s), the behavior's rate policies over recent scale events, and the min/max bounds,
// with the AbleToScale and ScalingLimited reasons that explain the result. Pure: the history per
// HPA is passed in and updated.
import type { HPAScalingRules, HorizontalPodAutoscalerBehavior } from 'kubernetes-types/autoscaling/v2.js';

/** Upstream's --horizontal-pod-autoscaler-downscale-stabilization. */
export const DEFAULT_DOWNSCALE_STABILIZATION_MS = 5 * 60_000;
/** Without behavior, a scale-up is capped at max(2 × current, 4). */
const SCALE_UP_LIMIT_FACTOR = 2;
const SCALE_UP_LIMIT_MINIMUM = 4;

interface Recommendation {
  replicas: number;
  at: number;
}
interface ScaleEvent {
  change: number;
  at: number;
  outdated: boolean;
}

/** What the controller remembers of one HPA between syncs (upstream's recommendations and scale events). */
export interface AutoscalerHistory {
  recommendations: Recommendation[];
  scaleUpEvents: ScaleEvent[];
  scaleDownEvents: ScaleEvent[];
}

export const newHistory = (currentReplicas: number, now: number): AutoscalerHistory => ({
  recommendations: [{ replicas: currentReplicas, at: now }],
  scaleUpEvents: [],
  scaleDownEvents: [],
});

export interface ConditionText {
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  /** AbleToScale=True's reason: ReadyForNewScale, ScaleUpStabilized or ScaleDownStabilized. */
  ableToScale: ConditionText;
  /** ScalingLimited: True when the bounds or rates changed the stabilized recommendation. */
  scalingLimited: ConditionText & { limited: boolean };
}

const readyForNewScale: ConditionText = { reason: 'ReadyForNewScale', message: 'recommended size matches current size' };
const scaleDownStabilized: ConditionText = {
  reason: 'ScaleDownStabilized',
  message: 'recent recommendations were higher than current one, applying the highest recent recommendation',
};
const scaleUpStabilized: ConditionText = {
  reason: 'ScaleUpStabilized',
  message: 'recent recommendations were lower than current one, applying the lowest recent recommendation',
};
const withinRange: ConditionText = { reason: 'DesiredWithinRange', message: 'the desired count is within the acceptable range' };
const scaleUpLimit: ConditionText = { reason: 'ScaleUpLimit', message: 'the desired replica count is increasing faster than the maximum scale rate' };
const tooMany: ConditionText = { reason: 'TooManyReplicas', message: 'the desired replica count is more than the maximum replica count' };
const tooFew: ConditionText = { reason: 'TooFewReplicas', message: 'the desired replica count is less than the minimum replica count' };
const scaleDownLimit: ConditionText = { reason: 'ScaleDownLimit', message: 'the desired replica count is decreasing faster than the maximum scale rate' };

/** Records the recommendation in place of the oldest expired one, or appends it. */
function record(history: AutoscalerHistory, replicas: number, now: number, expired: (r: Recommendation) => boolean): void {
  let index = -1;
  history.recommendations.forEach((r, i) => {
    if (expired(r)) index = i;
  });
  if (index >= 0) history.recommendations[index] = { replicas, at: now };
  else history.recommendations.push({ replicas, at: now });
}

function limited(replicas: number, stabilized: number, text: ConditionText): Normalized['scalingLimited'] {
  return { ...text, limited: replicas !== stabilized };
}

/** normalizeDesiredReplicas: the HPA without behavior. */
export function normalizeDesiredReplicas(
  history: AutoscalerHistory,
  now: number,
  currentReplicas: number,
  desired: number,
  minReplicas: number,
  maxReplicas: number,
  downscaleStabilizationMs = DEFAULT_DOWNSCALE_STABILIZATION_MS,
): Normalized {
  const cutoff = now - downscaleStabilizationMs;
  let stabilized = desired;
  for (const r of history.recommendations) if (r.at >= cutoff && r.replicas > stabilized) stabilized = r.replicas;
  record(history, desired, now, (r) => r.at < cutoff);
  const ableToScale = stabilized !== desired ? scaleDownStabilized : readyForNewScale;

  const upLimit = Math.max(SCALE_UP_LIMIT_FACTOR * currentReplicas, SCALE_UP_LIMIT_MINIMUM);
  const [maxAllowed, maxText] = maxReplicas > upLimit ? [upLimit, scaleUpLimit] : [maxReplicas, tooMany];
  let replicas = stabilized;
  let text = withinRange;
  if (stabilized < minReplicas) [replicas, text] = [minReplicas, tooFew];
  else if (stabilized > maxAllowed) [replicas, text] = [maxAllowed, maxText];
  return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, text) };
}

const seconds = (v: number | undefined) => (v ?? 0) * 1000;

/** The replicas added (or removed) by events within the last periodSeconds. */
function changeInPeriod(periodSeconds: number, events: readonly ScaleEvent[], now: number): number {
  const cutoff = now - periodSeconds * 1000;
  return events.filter((e) => e.at > cutoff).reduce((sum, e) => sum + e.change, 0);
}

/** calculateScaleUpLimitWithScalingRules and calculateScaleDownLimitWithBehaviors. */
function rateLimit(direction: 'up' | 'down', currentReplicas: number, history: AutoscalerHistory, rules: HPAScalingRules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return currentReplicas;
  // For a scale-up the Min policy picks the smallest proposal; for a scale-down, the largest.
  const pickMax = (rules.selectPolicy === 'Min') === (direction === 'down');
  let result = pickMax ? -Infinity : Infinity;
  for (const policy of rules.policies ?? []) {
    const start = currentReplicas - changeInPeriod(policy.periodSeconds, history.scaleUpEvents, now) + changeInPeriod(policy.periodSeconds, history.scaleDownEvents, now);
    let proposed: number;
    if (direction === 'up') proposed = policy.type === 'Pods' ? start + policy.value : Math.ceil(start * (1 + policy.value / 100));
    else proposed = policy.type === 'Pods' ? start - policy.value : Math.trunc(start * (1 - policy.value / 100));
    result = pickMax ? Math.max(result, proposed) : Math.min(result, proposed);
  }
  return result;
}

/** normalizeDesiredReplicasWithBehaviors: stabilization windows per direction, then the rate policies. */
export function normalizeDesiredReplicasWithBehaviors(
  history: AutoscalerHistory,
  now: number,
  behavior: HorizontalPodAutoscalerBehavior,
  currentReplicas: number,
  desired: number,
  minReplicas: number,
  maxReplicas: number,
  downscaleStabilizationMs = DEFAULT_DOWNSCALE_STABILIZATION_MS,
): Normalized {
  const up = behavior.scaleUp ?? {};
  const down = behavior.scaleDown ?? {};
  const upCutoff = now - seconds(up.stabilizationWindowSeconds);
  const downCutoff = now - (down.stabilizationWindowSeconds == null ? downscaleStabilizationMs : seconds(down.stabilizationWindowSeconds));
  let upRecommendation = desired;
  let downRecommendation = desired;
  for (const r of history.recommendations) {
    if (r.at > upCutoff) upRecommendation = Math.min(r.replicas, upRecommendation);
    if (r.at > downCutoff) downRecommendation = Math.max(r.replicas, downRecommendation);
  }
  let stabilized = Math.max(currentReplicas, upRecommendation);
  stabilized = Math.min(stabilized, downRecommendation);
  record(history, desired, now, (r) => r.at < upCutoff && r.at < downCutoff);
  const ableToScale = stabilized === desired ? readyForNewScale : desired >= currentReplicas ? scaleUpStabilized : scaleDownStabilized;

  let replicas = stabilized;
  let text = withinRange;
  if (stabilized > currentReplicas) {
    // Until older events age out a rate may forbid any growth, never a shrink.
    const limit = Math.max(rateLimit('up', currentReplicas, history, up, now), currentReplicas);
    const [maxAllowed, maxText] = maxReplicas > limit ? [limit, scaleUpLimit] : [maxReplicas, tooMany];
    if (stabilized > maxAllowed) [replicas, text] = [maxAllowed, maxText];
  } else if (stabilized < currentReplicas) {
    const limit = Math.min(rateLimit('down', currentReplicas, history, down, now), currentReplicas);
    const [minAllowed, minText] = minReplicas < limit ? [limit, scaleDownLimit] : [minReplicas, tooFew];
    if (stabilized < minAllowed) [replicas, text] = [minAllowed, minText];
  }
  return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, text) };
}

const longestPeriod = (rules: HPAScalingRules | undefined) => Math.max(0, ...(rules?.policies ?? []).map((p) => p.periodSeconds));

/** storeScaleEvent: only HPAs with behavior keep events, replacing one older than the longest policy period. */
export function storeScaleEvent(history: AutoscalerHistory, behavior: HorizontalPodAutoscalerBehavior | undefined, now: number, previous: number, next: number): void {
  if (!behavior) return;
  const [events, rules, change] = next > previous ? [history.scaleUpEvents, behavior.scaleUp, next - previous] : [history.scaleDownEvents, behavior.scaleDown, previous - next];
  const cutoff = now - longestPeriod(rules) * 1000;
  for (const e of events) if (e.at < cutoff) e.outdated = true;
  let index = -1;
  events.forEach((e, i) => {
    if (e.outdated) index = i;
  });
  const event = { change, at: now, outdated: false };
  if (index >= 0) events[index] = event;
  else events.push(event);
}
