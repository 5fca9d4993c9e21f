// RuntimeClass, as upstream: a new pod naming a RuntimeClass gets its pod overhead and its
// scheduling constraints (node selector and tolerations); an unknown class, an overhead that
// differs from the class's, or an overhead without a class is refused.
import type { Pod, Toleration } from 'kubernetes-types/core/v1.js';
import type { RuntimeClass } from 'kubernetes-types/node/v1.js';
import { fieldErrorMessage, forbidden, Path } from '../../../api/field.js';
import { deepEqual } from '../../../api/validation/meta.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'RuntimeClass';

const overheadPath = Path.root('spec').child('overhead');
const overheadMismatch = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
const overheadWithoutClass = 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead';

export interface RuntimeClassAdmissionOptions {
  lookups: AdmissionLookups;
}

export class RuntimeClassAdmission implements MutatingAdmissionPlugin, ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: AdmissionLookups;

  constructor(opts: RuntimeClassAdmissionOptions) {
    this.lookups = opts.lookups;
  }

  handles(a: AdmissionAttributes): boolean {
    return a.operation === 'CREATE' && a.subresource === '' && a.resource.group === '' && a.resource.resource === 'pods';
  }

  private async runtimeClass(a: AdmissionAttributes, pod: Pod): Promise<RuntimeClass | undefined> {
    const name = pod.spec?.runtimeClassName;
    if (!name) return undefined;
    const rc = await this.lookups.get('runtimeclasses.node.k8s.io', '', name);
    if (!rc) throw admissionForbidden(a, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
    return rc;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as Pod | undefined;
    const spec = pod?.spec;
    if (!spec) return;
    const rc = await this.runtimeClass(a, pod);
    if (!rc) return;
    if (rc.overhead?.podFixed) {
      if (spec.overhead && !deepEqual(spec.overhead, rc.overhead.podFixed)) throw admissionForbidden(a, fieldErrorMessage(forbidden(overheadPath, overheadMismatch)));
      if (!spec.overhead) a.timeline?.mutated('spec.overhead');
      spec.overhead = { ...rc.overhead.podFixed };
    }
    const scheduling = rc.scheduling;
    if (!scheduling) return;
    const selector = { ...spec.nodeSelector };
    let selectorChanged = false;
    for (const [key, value] of Object.entries(scheduling.nodeSelector ?? {})) {
      const podValue = selector[key];
      if (podValue !== undefined && podValue !== value) {
        throw admissionForbidden(a, `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${value}; pod.spec.nodeSelector[${key}] = ${podValue}`);
      }
      selectorChanged ||= podValue === undefined;
      selector[key] = value;
    }
    if (Object.keys(selector).length) spec.nodeSelector = selector;
    if (selectorChanged) a.timeline?.mutated('spec.nodeSelector');
    if (!scheduling.tolerations?.length) return;
    const tolerations = mergeTolerations(spec.tolerations ?? [], scheduling.tolerations);
    if (tolerations.length !== (spec.tolerations ?? []).length) a.timeline?.mutated('spec.tolerations');
    spec.tolerations = tolerations;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as Pod | undefined;
    if (!pod?.spec?.overhead) return;
    const rc = await this.runtimeClass(a, pod);
    if (!rc?.overhead?.podFixed) throw admissionForbidden(a, fieldErrorMessage(forbidden(overheadPath, overheadWithoutClass)));
    if (!deepEqual(pod.spec.overhead, rc.overhead.podFixed)) throw admissionForbidden(a, fieldErrorMessage(forbidden(overheadPath, overheadMismatch)));
  }
}

/** The pod's tolerations plus the class's ones it does not already have. */
function mergeTolerations(own: Toleration[], extra: Toleration[]): Toleration[] {
  const out = [...own];
  for (const t of extra) if (!out.some((o) => deepEqual(o, t))) out.push(t);
  return out;
}
