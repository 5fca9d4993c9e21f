// DefaultIngressClass, as upstream: a new Ingress that names no class (neither
// spec.ingressClassName nor the legacy kubernetes.io/ingress.class annotation) gets the
// IngressClass marked default; with several marked, the newest (then the first by name) wins.
import type { Ingress, IngressClass } from 'kubernetes-types/networking/v1.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'DefaultIngressClass';

export const isDefaultIngressClassAnnotation = 'ingressclass.kubernetes.io/is-default-class';
const legacyIngressClassAnnotation = 'kubernetes.io/ingress.class';

export interface DefaultIngressClassOptions {
  lookups: AdmissionLookups;
}

export class DefaultIngressClass implements MutatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: AdmissionLookups;

  constructor(opts: DefaultIngressClassOptions) {
    this.lookups = opts.lookups;
  }

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && a.resource.group === 'networking.k8s.io' && a.resource.resource === 'ingresses';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const ing = a.object as Ingress | undefined;
    if (!ing || ing.spec?.ingressClassName != null || ing.metadata?.annotations?.[legacyIngressClassAnnotation] !== undefined) return;
    const defaults = (await this.lookups.list('ingressclasses.networking.k8s.io')).filter((c) => c.metadata?.annotations?.[isDefaultIngressClassAnnotation] === 'true');
    const chosen = defaults.sort(newestFirst)[0]?.metadata?.name;
    if (chosen) ing.spec = { ...ing.spec, ingressClassName: chosen };
  }
}

function newestFirst(x: IngressClass, y: IngressClass): number {
  const tx = Date.parse(x.metadata?.creationTimestamp ?? '') || 0;
  const ty = Date.parse(y.metadata?.creationTimestamp ?? '') || 0;
  if (tx !== ty) return ty - tx;
  return (x.metadata?.name ?? '').localeCompare(y.metadata?.name ?? '');
}
