// Toleration matching as upstream's v1helper: an empty toleration effect matches every effect, an
// empty key with Exists matches every taint, Exists ignores the value, Equal (the default) compares it.
import type { Taint, Toleration } from 'kubernetes-types/core/v1.js';

export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

export function tolerationsTolerateTaint(tolerations: readonly Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}

/** The first taint passing the filter that no toleration tolerates. */
export function findMatchingUntoleratedTaint(
  taints: readonly Taint[] | undefined,
  tolerations: readonly Toleration[] | undefined,
  filter: (t: Taint) => boolean,
): Taint | undefined {
  for (const taint of taints ?? []) if (filter(taint) && !tolerationsTolerateTaint(tolerations, taint)) return taint;
  return undefined;
}
