// Priority, as upstream: a new pod's spec.priorityClassName resolves to spec.priority and
// spec.preemptionPolicy (the global default class, else 0, when unnamed); updates keep the values
// set at creation; and only one PriorityClass may be the global default.
import type { PriorityClass } from 'kubernetes-types/scheduling/v1.js';
import { systemPriorityClasses } from '../../../api/validation/index.js';
import { admissionForbidden } from '../errors.js';
import type { AdmissionAttributes, AdmissionLookups, MutatingAdmissionPlugin, ValidatingAdmissionPlugin } from '../interface.js';

export const pluginName = 'Priority';

/** The priority of a pod without a class when no class is the global default. */
export const DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0;

interface PodPrioritySpec {
  priorityClassName?: string;
  priority?: number;
  preemptionPolicy?: string;
}

/** The system classes as objects, for the API server to create at startup as upstream does. */
export function systemPriorityClassObjects(): PriorityClass[] {
  return systemPriorityClasses.map((c) => ({
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: c.name },
    value: c.value,
    description: c.description,
    preemptionPolicy: 'PreemptLowerPriority',
  }));
}

const isPods = (a: AdmissionAttributes) => a.resource.group === '' && a.resource.resource === 'pods';
const group = 'scheduling.k8s.io';
const isPriorityClasses = (a: AdmissionAttributes) => a.resource.group === group && a.resource.resource === 'priorityclasses';

export interface PriorityAdmissionOptions {
  lookups: AdmissionLookups;
}

export class PriorityAdmission implements MutatingAdmissionPlugin, ValidatingAdmissionPlugin {
  readonly name = pluginName;
  private readonly lookups: PriorityAdmissionOptions['lookups'];

  constructor(opts: PriorityAdmissionOptions) {
    this.lookups = opts.lookups;
  }

  handles(a: AdmissionAttributes): boolean {
    return (a.operation === 'CREATE' || a.operation === 'UPDATE') && a.subresource === '' && (isPods(a) || isPriorityClasses(a));
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (!isPods(a)) return;
    const spec = a.object?.spec as PodPrioritySpec | undefined;
    if (!spec) return;
    if (a.operation === 'UPDATE') {
      // Validation forbids changing these; an update that omits them keeps the stored values.
      const old = a.oldObject?.spec as PodPrioritySpec | undefined;
      if (spec.priority == null && old?.priority != null) {
        spec.priority = old.priority;
        a.timeline?.mutated('spec.priority');
      }
      if (spec.preemptionPolicy == null && old?.preemptionPolicy != null) {
        spec.preemptionPolicy = old.preemptionPolicy;
        a.timeline?.mutated('spec.preemptionPolicy');
      }
      return;
    }
    let priority: number;
    let preemptionPolicy: string | undefined;
    if (!spec.priorityClassName) {
      const dpc = await this.defaultClass();
      const name = dpc?.metadata?.name;
      if (name || spec.priorityClassName !== undefined) a.timeline?.mutated('spec.priorityClassName');
      // Upstream leaves an empty class name unset.
      if (name) spec.priorityClassName = name;
      else delete spec.priorityClassName;
      priority = dpc ? dpc.value : DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS;
      preemptionPolicy = dpc ? dpc.preemptionPolicy : 'PreemptLowerPriority';
    } else {
      const pc = await this.getClass(spec.priorityClassName);
      if (!pc) throw admissionForbidden(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = pc.value;
      preemptionPolicy = pc.preemptionPolicy;
    }
    if (spec.priority != null && spec.priority !== priority) {
      throw admissionForbidden(
        a,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    if (spec.priority == null) a.timeline?.mutated('spec.priority');
    spec.priority = priority;
    if (preemptionPolicy) {
      if (spec.preemptionPolicy != null && spec.preemptionPolicy !== preemptionPolicy) {
        throw admissionForbidden(
          a,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${preemptionPolicy} from the given PriorityClass name`,
        );
      }
      if (spec.preemptionPolicy == null) a.timeline?.mutated('spec.preemptionPolicy');
      spec.preemptionPolicy = preemptionPolicy;
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isPriorityClasses(a)) return;
    const pc = a.object as PriorityClass | undefined;
    if (!pc?.globalDefault) return;
    const dpc = await this.defaultClass();
    const name = pc.metadata?.name;
    if (dpc && (a.operation === 'CREATE' || dpc.metadata?.name !== name)) {
      throw admissionForbidden(a, `PriorityClass ${dpc.metadata?.name} is already marked as default. Only one default can exist`);
    }
  }

  /** A class by name; the system classes resolve even before the server has stored them. */
  private async getClass(name: string): Promise<PriorityClass | undefined> {
    const stored = await this.lookups.get('priorityclasses.scheduling.k8s.io', '', name);
    return stored ?? systemPriorityClassObjects().find((c) => c.metadata?.name === name);
  }

  /** The global default class; with several (a race upstream tolerates too) the lowest value wins. */
  private async defaultClass(): Promise<PriorityClass | undefined> {
    let best: PriorityClass | undefined;
    for (const pc of await this.lookups.list('priorityclasses.scheduling.k8s.io')) {
      if (pc.globalDefault && (!best || best.value > pc.value)) best = pc;
    }
    return best;
  }
}
