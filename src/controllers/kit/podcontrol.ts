// Pod control, as upstream's RealPodControl: controllers create pods from their template with a
// controller reference (generateName `<owner>-`), delete them, and patch them for adoption and
// release — each recorded as upstream's events on the owning object.
import type { Pod, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import type { OwnerReference } from 'kubernetes-types/meta/v1.js';
import { nameIsDNSSubdomain } from '../../api/validation/names.js';
import { hasStatusCode, StatusError } from '../../api/errors.js';
import type { Client } from '../../client/client.js';
import type { MetaObject } from '../../client/indexer.js';
import type { EventRecorder, InvolvedObject } from '../../client/record/recorder.js';

export const FAILED_CREATE_POD_REASON = 'FailedCreate';
export const SUCCESSFUL_CREATE_POD_REASON = 'SuccessfulCreate';
export const FAILED_DELETE_POD_REASON = 'FailedDelete';
export const SUCCESSFUL_DELETE_POD_REASON = 'SuccessfulDelete';
/** The status cause a create in a terminating namespace fails with (no event for it, as upstream). */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

export interface PodControl {
  /** Creates a pod from the template, owned by controllerRef; `controller` is what events are about. */
  createPods(namespace: string, template: PodTemplateSpec, controller: MetaObject, controllerRef: OwnerReference): Promise<void>;
  createPodsWithGenerateName(namespace: string, template: PodTemplateSpec, controller: MetaObject, controllerRef: OwnerReference, generateName: string): Promise<void>;
  deletePod(namespace: string, name: string, controller: MetaObject): Promise<void>;
  /** A strategic merge patch (adoption, release). */
  patchPod(namespace: string, name: string, patch: object): Promise<void>;
}

/** Upstream's validateControllerRef. */
export function validateControllerRef(ref: OwnerReference | undefined): void {
  if (!ref) throw new Error('controllerRef is nil');
  if (!ref.apiVersion) throw new Error('controllerRef has empty APIVersion');
  if (!ref.kind) throw new Error('controllerRef has empty Kind');
  if (ref.controller !== true) throw new Error('controllerRef.Controller is not set to true');
  if (ref.blockOwnerDeletion !== true) throw new Error('controllerRef.BlockOwnerDeletion is not set');
}

/** `<name>-` when that is a valid generateName, else the name itself (upstream's getPodsPrefix). */
function podsPrefix(controllerName: string): string {
  const prefix = `${controllerName}-`;
  return nameIsDNSSubdomain(prefix, true).length === 0 ? prefix : controllerName;
}

/** Upstream's GetPodFromTemplate: the template's labels, annotations, finalizers and spec, named after the owner. */
export function podFromTemplate(template: PodTemplateSpec, controller: MetaObject, controllerRef?: OwnerReference): Pod {
  const meta = template.metadata ?? {};
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: podsPrefix(controller.metadata?.name ?? ''),
      ...(meta.labels ? { labels: { ...meta.labels } } : {}),
      ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
      ...(meta.finalizers ? { finalizers: [...meta.finalizers] } : {}),
      ...(controllerRef ? { ownerReferences: [{ ...controllerRef }] } : {}),
    },
    spec: structuredClone(template.spec),
  };
  return pod;
}

/** The reference events carry to the object they are about. */
export function involvedObject(obj: MetaObject): InvolvedObject {
  const m = obj.metadata ?? {};
  return { apiVersion: obj.apiVersion, kind: obj.kind, namespace: m.namespace, name: m.name, uid: m.uid, resourceVersion: m.resourceVersion };
}

export const hasStatusCause = (err: unknown, type: string) => err instanceof StatusError && (err.details?.causes ?? []).some((c) => c.reason === type);

export class RealPodControl implements PodControl {
  constructor(
    private readonly client: Client,
    private readonly recorder: EventRecorder,
  ) {}

  private pods(namespace: string) {
    return this.client.resource('pods').namespace(namespace);
  }

  createPods(namespace: string, template: PodTemplateSpec, controller: MetaObject, controllerRef: OwnerReference): Promise<void> {
    return this.create(namespace, template, controller, controllerRef, '');
  }

  createPodsWithGenerateName(namespace: string, template: PodTemplateSpec, controller: MetaObject, controllerRef: OwnerReference, generateName: string): Promise<void> {
    return this.create(namespace, template, controller, controllerRef, generateName);
  }

  private async create(namespace: string, template: PodTemplateSpec, controller: MetaObject, controllerRef: OwnerReference, generateName: string): Promise<void> {
    validateControllerRef(controllerRef);
    const pod = podFromTemplate(template, controller, controllerRef);
    pod.metadata!.namespace = namespace;
    if (generateName) pod.metadata!.generateName = generateName;
    if (Object.keys(pod.metadata?.labels ?? {}).length === 0) throw new Error('unable to create pods, no labels');
    let created: Pod;
    try {
      created = await this.pods(namespace).create(pod);
    } catch (err) {
      if (!hasStatusCause(err, NAMESPACE_TERMINATING_CAUSE)) this.recorder.event(involvedObject(controller), 'Warning', FAILED_CREATE_POD_REASON, `Error creating: ${(err as Error).message}`);
      throw err;
    }
    this.recorder.event(involvedObject(controller), 'Normal', SUCCESSFUL_CREATE_POD_REASON, `Created pod: ${created.metadata?.name}`);
  }

  async deletePod(namespace: string, name: string, controller: MetaObject): Promise<void> {
    try {
      await this.pods(namespace).delete(name);
    } catch (err) {
      // Already gone: the caller's expectations decide what that means; no event.
      if (hasStatusCode(err, 404)) throw err;
      this.recorder.event(involvedObject(controller), 'Warning', FAILED_DELETE_POD_REASON, `Error deleting: ${(err as Error).message}`);
      throw new Error(`unable to delete pods: ${(err as Error).message}`, { cause: err });
    }
    this.recorder.event(involvedObject(controller), 'Normal', SUCCESSFUL_DELETE_POD_REASON, `Deleted pod: ${name}`);
  }

  async patchPod(namespace: string, name: string, patch: object): Promise<void> {
    await this.pods(namespace).patch(name, 'strategic', patch);
  }
}
