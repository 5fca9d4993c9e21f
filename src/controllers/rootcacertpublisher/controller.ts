// The root CA certificate publisher, as upstream's pkg/controller/certificates/rootcacertpublisher:
// every active namespace has the ConfigMap kube-root-ca.crt whose ca.crt is the cluster CA (the
// --root-ca-file), kept equal to it; pods read it through their kube-api-access volume.
import type { ConfigMap, Namespace } from '../../api/types.js';
import { hasStatusCode } from '../../api/errors.js';
import { findResource } from '../../api/resources.js';
import { unwrapDeleted, type DeletedFinalStateUnknown, type Indexer } from '../../client/indexer.js';
import { QueueController, type ControllerOptions } from '../kit/controller.js';

export const rootCAConfigMapName = 'kube-root-ca.crt';
export const descriptionAnnotation = 'kubernetes.io/description';
const description =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

const namespacesResource = findResource('', 'v1', 'namespaces')!;
const configMapsResource = findResource('', 'v1', 'configmaps')!;

export interface RootCACertPublisherOptions extends Omit<ControllerOptions, 'recorder'> {
  /** The PEM bundle to publish. */
  rootCA: string;
}

export class RootCACertPublisher {
  private readonly namespaces: Indexer<Namespace>;
  private readonly configMaps: Indexer<ConfigMap>;
  private readonly controller: QueueController;

  constructor(private readonly opts: RootCACertPublisherOptions) {
    const nsInformer = opts.informers.informerFor<Namespace>(namespacesResource);
    const cmInformer = opts.informers.informerFor<ConfigMap>(configMapsResource);
    this.namespaces = nsInformer.indexer;
    this.configMaps = cmInformer.indexer;
    this.controller = new QueueController({ name: 'root_ca_cert_publisher', clock: opts.clock, logger: opts.logger, sources: [nsInformer, cmInformer], sync: (ns) => this.sync(ns), workers: opts.workers });
    const onNamespace = (ns: Namespace) => this.controller.enqueue(ns.metadata!.name!);
    nsInformer.addEventHandler({ onAdd: onNamespace, onUpdate: (_old, cur) => onNamespace(cur) });
    const onConfigMap = (obj: ConfigMap | DeletedFinalStateUnknown<ConfigMap>) => {
      const cm = unwrapDeleted(obj);
      if (cm.metadata?.name === rootCAConfigMapName) this.controller.enqueue(cm.metadata.namespace ?? '');
    };
    cmInformer.addEventHandler({ onUpdate: (_old, cur) => onConfigMap(cur), onDelete: onConfigMap });
  }

  start(): void {
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.getByKey(namespace);
    if (!ns || ns.status?.phase !== 'Active' || ns.metadata?.deletionTimestamp) return;
    const client = this.opts.client.resource<ConfigMap>(configMapsResource).namespace(namespace);
    const data = { 'ca.crt': this.opts.rootCA };
    const cm = this.configMaps.getByKey(`${namespace}/${rootCAConfigMapName}`);
    try {
      if (!cm) {
        await client.create({ metadata: { name: rootCAConfigMapName, annotations: { [descriptionAnnotation]: description } }, data });
        return;
      }
      const same = Object.keys(cm.data ?? {}).length === 1 && cm.data?.['ca.crt'] === this.opts.rootCA && !cm.binaryData;
      if (same && cm.metadata?.annotations?.[descriptionAnnotation]) return;
      const { binaryData: _dropped, ...rest } = cm;
      await client.update({ ...rest, data, metadata: { ...cm.metadata, annotations: { ...cm.metadata?.annotations, [descriptionAnnotation]: description } } });
    } catch (err) {
      // A stale cache (409) or a namespace that began terminating (403): the next event syncs again.
      if (!hasStatusCode(err, 409) && !hasStatusCode(err, 403) && !hasStatusCode(err, 404)) throw err;
    }
  }
}
