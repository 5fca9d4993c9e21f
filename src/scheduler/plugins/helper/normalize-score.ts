// Upstream's helper.DefaultNormalizeScore: scale scores so the highest becomes maxPriority (integer
// division, as Go's int64), optionally reversed so the lowest raw score ranks best.
import type { Result } from '../../framework/status.js';

export function defaultNormalizeScore(maxPriority: number, reverse: boolean, scores: number[]): Result {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) {
    if (reverse) scores.fill(maxPriority);
    return undefined;
  }
  for (let i = 0; i < scores.length; i++) {
    const s = Math.trunc((maxPriority * scores[i]!) / max);
    scores[i] = reverse ? maxPriority - s : s;
  }
  return undefined;
}
