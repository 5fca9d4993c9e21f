// Upstream's defaulters of the workload kinds (apps/v1 defaults.go, core/v1 SetDefaults_ReplicationController),
// each followed by the pod-template defaults of its template.
import { child, defaultPodTemplate, defaultResourceList, isObj, type Obj } from './podspec.js';

export function defaultDeployment(d: Obj): void {
  const spec = child(d, 'spec');
  if (spec.replicas == null) spec.replicas = 1;
  const strategy = child(spec, 'strategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    if (ru.maxUnavailable == null) ru.maxUnavailable = '25%';
    if (ru.maxSurge == null) ru.maxSurge = '25%';
  }
  if (spec.revisionHistoryLimit == null) spec.revisionHistoryLimit = 10;
  if (spec.progressDeadlineSeconds == null) spec.progressDeadlineSeconds = 600;
  defaultPodTemplate(spec.template);
}

export function defaultReplicaSet(rs: Obj): void {
  const spec = child(rs, 'spec');
  if (spec.replicas == null) spec.replicas = 1;
  defaultPodTemplate(spec.template);
}

/** SetDefaults_DaemonSet: RollingUpdate one node at a time without surge, ten revisions kept. */
export function defaultDaemonSet(ds: Obj): void {
  const spec = child(ds, 'spec');
  const strategy = child(spec, 'updateStrategy');
  if (!strategy.type) strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = child(strategy, 'rollingUpdate');
    if (ru.maxUnavailable == null) ru.maxUnavailable = 1;
    if (ru.maxSurge == null) ru.maxSurge = 0;
  }
  if (spec.revisionHistoryLimit == null) spec.revisionHistoryLimit = 10;
  defaultPodTemplate(spec.template);
}

/** SetDefaults_PersistentVolumeClaim and its spec, for a StatefulSet's claim templates. */
function defaultClaimTemplate(pvc: unknown): void {
  if (!isObj(pvc)) return;
  const spec = child(pvc, 'spec');
  if (spec.volumeMode == null) spec.volumeMode = 'Filesystem';
  defaultResourceList(spec.resources?.limits);
  defaultResourceList(spec.resources?.requests);
  const status = child(pvc, 'status');
  if (!status.phase) status.phase = 'Pending';
  defaultResourceList(status.capacity);
  defaultResourceList(status.allocatedResources);
}

/**
 * SetDefaults_StatefulSet with 1.33's gates: StatefulSetAutoDeletePVC on (the retention policy is
 * defaulted), MaxUnavailableStatefulSet off (rollingUpdate.maxUnavailable is not).
 */
export function defaultStatefulSet(ss: Obj): void {
  const spec = child(ss, 'spec');
  if (!spec.podManagementPolicy) spec.podManagementPolicy = 'OrderedReady';
  const strategy = child(spec, 'updateStrategy');
  if (!strategy.type) {
    strategy.type = 'RollingUpdate';
    if (strategy.rollingUpdate == null) strategy.rollingUpdate = {};
  }
  if (strategy.type === 'RollingUpdate' && isObj(strategy.rollingUpdate) && strategy.rollingUpdate.partition == null) strategy.rollingUpdate.partition = 0;
  const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
  if (!retention.whenDeleted) retention.whenDeleted = 'Retain';
  if (!retention.whenScaled) retention.whenScaled = 'Retain';
  if (spec.replicas == null) spec.replicas = 1;
  if (spec.revisionHistoryLimit == null) spec.revisionHistoryLimit = 10;
  defaultPodTemplate(spec.template);
  if (Array.isArray(spec.volumeClaimTemplates)) spec.volumeClaimTemplates.forEach(defaultClaimTemplate);
}

/** SetDefaults_ReplicationController: selector and labels from the template's labels when unset, one replica. */
export function defaultReplicationController(rc: Obj): void {
  const spec = child(rc, 'spec');
  const labels = isObj(spec.template) ? spec.template.metadata?.labels : undefined;
  if (isObj(labels)) {
    if (!isObj(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
    const meta = child(rc, 'metadata');
    if (!isObj(meta.labels) || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
  }
  if (spec.replicas == null) spec.replicas = 1;
  defaultPodTemplate(spec.template);
}

export function defaultPodTemplateObject(pt: Obj): void {
  defaultPodTemplate(pt.template);
}
