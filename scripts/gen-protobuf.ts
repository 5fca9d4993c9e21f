// Regenerates src/api/protobuf/descriptors.json: the protobuf field tables of every kind kite serves
// (src/api/resources.ts, with the kinds their subresources take), of DeleteOptions, of
// runtime.Unknown (the envelope of every Kubernetes protobuf body) and of every message they reach.
//
//   npx tsx scripts/gen-protobuf.ts <proto-root>
//
// <proto-root> holds local copies of upstream's go-to-protobuf output (Kubernetes 1.33 or later:
// fields the 1.33 OpenAPI schemas lack are skipped, as 1.33 skips unknown fields) laid out by import path:
//   k8s.io/api/{core,apps,batch,certificates,coordination,discovery,events,scheduling,policy,networking,node,rbac,admissionregistration,authentication,authorization}/v1/generated.proto,
//   k8s.io/api/autoscaling/{v1,v2}/generated.proto
//   k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto
//   k8s.io/apimachinery/pkg/{api/resource,util/intstr,runtime}/generated.proto
// taken from kubernetes/kubernetes under staging/src/. Only message and field declarations are read,
// so comments may be stripped and messages no served kind reaches may be left out. The copies are not
// committed; rerun after adding a served kind (src/api/protobuf/decode.test.ts fails until then).
//
// Two facts of the Go types are not in the .proto files; this script adds them to the table:
// - `inline`: fields Go embeds with `json:",inline"`, whose members sit in the parent's JSON object;
// - `keepZero`: scalars whose zero value still appears in JSON, because the Go field is a pointer
//   (listed in `pointers` below) or has no `omitempty` (the OpenAPI `required` list in
//   src/api/schemas/components.json). Every other scalar holding its zero value is left out, as
//   encoding/json's omitempty does, although Go's protobuf encoder always writes it.
// Both lists are checked against the .proto files and components.json, so a wrong or stale entry
// stops the script.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { FieldDescriptor } from '../src/api/protobuf/decode.js';
import { resources, reviewResources } from '../src/api/resources.js';
import components from '../src/api/schemas/components.json' with { type: 'json' };

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(projectRoot, 'src/api/protobuf/descriptors.json');

const CORE = 'k8s.io.api.core.v1';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
const UNKNOWN = 'k8s.io.apimachinery.pkg.runtime.Unknown';

/** The protobuf package of a group version: k8s.io.api.<the group's first label>.<version>. */
const packageOf = (group: string, version: string) => (group ? `k8s.io.api.${group.split('.')[0]}.${version}` : CORE.replace(/v1$/, version));

/** Go fields embedded with `json:",inline"` (message → field). */
const inline: Record<string, string[]> = {
  [`${CORE}.ConfigMapEnvSource`]: ['localObjectReference'],
  [`${CORE}.ConfigMapKeySelector`]: ['localObjectReference'],
  [`${CORE}.ConfigMapProjection`]: ['localObjectReference'],
  [`${CORE}.ConfigMapVolumeSource`]: ['localObjectReference'],
  [`${CORE}.EphemeralContainer`]: ['ephemeralContainerCommon'],
  [`${CORE}.Probe`]: ['handler'],
  [`${CORE}.SecretEnvSource`]: ['localObjectReference'],
  [`${CORE}.SecretKeySelector`]: ['localObjectReference'],
  [`${CORE}.SecretProjection`]: ['localObjectReference'],
  [`${CORE}.Volume`]: ['volumeSource'],
  ['k8s.io.api.admissionregistration.v1.NamedRuleWithOperations']: ['ruleWithOperations'],
  ['k8s.io.api.admissionregistration.v1.RuleWithOperations']: ['rule'],
  ['k8s.io.api.networking.v1.IngressRule']: ['ingressRuleValue'],
};

/** Proto fields whose name is not their JSON name (upstream's protobuf tag names them after the Go field). */
const jsonNames: Record<string, Record<string, string>> = {
  'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration': { Webhooks: 'webhooks' },
  'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration': { Webhooks: 'webhooks' },
  'k8s.io.api.admissionregistration.v1.Validation': { Expression: 'expression' },
  'k8s.io.api.admissionregistration.v1.Variable': { Name: 'name', Expression: 'expression' },
  'k8s.io.api.authentication.v1.BoundObjectReference': { uID: 'uid' },
  'k8s.io.api.networking.v1.IngressClassParametersReference': { aPIGroup: 'apiGroup' },
};

/** Scalar fields that are pointers in the Go types (k8s.io/api 1.33): an explicit zero is meaningful. */
const pointers: Record<string, string[]> = {
  [`${CORE}.AppArmorProfile`]: ['localhostProfile'],
  [`${CORE}.AzureDiskVolumeSource`]: ['cachingMode', 'fsType', 'readOnly', 'kind'],
  [`${CORE}.CSIVolumeSource`]: ['readOnly', 'fsType'],
  [`${CORE}.ClientIPConfig`]: ['timeoutSeconds'],
  [`${CORE}.ClusterTrustBundleProjection`]: ['name', 'signerName', 'optional'],
  [`${CORE}.ConfigMap`]: ['immutable'],
  [`${CORE}.ConfigMapEnvSource`]: ['optional'],
  [`${CORE}.ConfigMapKeySelector`]: ['optional'],
  [`${CORE}.ConfigMapProjection`]: ['optional'],
  [`${CORE}.ConfigMapVolumeSource`]: ['defaultMode', 'optional'],
  [`${CORE}.Container`]: ['restartPolicy'],
  [`${CORE}.ContainerStatus`]: ['started', 'stopSignal'],
  [`${CORE}.DownwardAPIVolumeFile`]: ['mode'],
  [`${CORE}.DownwardAPIVolumeSource`]: ['defaultMode'],
  [`${CORE}.EndpointAddress`]: ['nodeName'],
  [`${CORE}.EndpointPort`]: ['appProtocol'],
  [`${CORE}.EphemeralContainerCommon`]: ['restartPolicy'],
  [`${CORE}.FCVolumeSource`]: ['lun'],
  [`${CORE}.GRPCAction`]: ['service'],
  [`${CORE}.HostPathVolumeSource`]: ['type'],
  [`${CORE}.ISCSIVolumeSource`]: ['initiatorName'],
  [`${CORE}.KeyToPath`]: ['mode'],
  [`${CORE}.Lifecycle`]: ['stopSignal'],
  [`${CORE}.LoadBalancerIngress`]: ['ipMode'],
  [`${CORE}.NodeFeatures`]: ['supplementalGroupsPolicy'],
  [`${CORE}.NodeRuntimeHandlerFeatures`]: ['recursiveReadOnlyMounts', 'userNamespaces'],
  [`${CORE}.NodeSwapStatus`]: ['capacity'],
  [`${CORE}.PersistentVolumeClaimSpec`]: ['storageClassName', 'volumeMode', 'volumeAttributesClassName'],
  [`${CORE}.PodDNSConfigOption`]: ['value'],
  [`${CORE}.PodResourceClaim`]: ['resourceClaimName', 'resourceClaimTemplateName'],
  [`${CORE}.PodResourceClaimStatus`]: ['resourceClaimName'],
  [`${CORE}.PodSecurityContext`]: [
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'fsGroup',
    'fsGroupChangePolicy',
    'supplementalGroupsPolicy',
    'seLinuxChangePolicy',
  ],
  [`${CORE}.PodSpec`]: [
    'terminationGracePeriodSeconds',
    'activeDeadlineSeconds',
    'automountServiceAccountToken',
    'shareProcessNamespace',
    'priority',
    'runtimeClassName',
    'enableServiceLinks',
    'preemptionPolicy',
    'setHostnameAsFQDN',
    'hostUsers',
  ],
  [`${CORE}.PortStatus`]: ['error'],
  [`${CORE}.Probe`]: ['terminationGracePeriodSeconds'],
  [`${CORE}.ProjectedVolumeSource`]: ['defaultMode'],
  [`${CORE}.SeccompProfile`]: ['localhostProfile'],
  [`${CORE}.Secret`]: ['immutable'],
  [`${CORE}.SecretEnvSource`]: ['optional'],
  [`${CORE}.SecretKeySelector`]: ['optional'],
  [`${CORE}.SecretProjection`]: ['optional'],
  [`${CORE}.SecretVolumeSource`]: ['defaultMode', 'optional'],
  [`${CORE}.SecurityContext`]: [
    'privileged',
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'readOnlyRootFilesystem',
    'allowPrivilegeEscalation',
    'procMount',
  ],
  [`${CORE}.ServiceAccount`]: ['automountServiceAccountToken'],
  [`${CORE}.ServiceAccountTokenProjection`]: ['expirationSeconds'],
  [`${CORE}.ServicePort`]: ['appProtocol'],
  [`${CORE}.ServiceSpec`]: [
    'ipFamilyPolicy',
    'allocateLoadBalancerNodePorts',
    'loadBalancerClass',
    'internalTrafficPolicy',
    'trafficDistribution',
  ],
  [`${CORE}.Toleration`]: ['tolerationSeconds'],
  [`${CORE}.TopologySpreadConstraint`]: ['minDomains', 'nodeAffinityPolicy', 'nodeTaintsPolicy'],
  [`${CORE}.TypedLocalObjectReference`]: ['apiGroup'],
  [`${CORE}.TypedObjectReference`]: ['apiGroup', 'namespace'],
  [`${CORE}.VolumeMount`]: ['mountPropagation', 'recursiveReadOnly'],
  [`${CORE}.VolumeMountStatus`]: ['recursiveReadOnly'],
  [`${CORE}.WindowsSecurityContextOptions`]: ['gmsaCredentialSpecName', 'gmsaCredentialSpec', 'runAsUserName', 'hostProcess'],
  [`${META}.DeleteOptions`]: [
    'gracePeriodSeconds',
    'orphanDependents',
    'propagationPolicy',
    'ignoreStoreReadErrorWithClusterBreakingPotential',
  ],
  [`${META}.ListMeta`]: ['remainingItemCount'],
  [`${META}.ObjectMeta`]: ['deletionGracePeriodSeconds'],
  [`${META}.OwnerReference`]: ['controller', 'blockOwnerDeletion'],
  [`${META}.Preconditions`]: ['uid', 'resourceVersion'],
  [`${CORE}.ReplicationControllerSpec`]: ['replicas'],
  'k8s.io.api.apps.v1.DeploymentSpec': ['replicas', 'revisionHistoryLimit', 'progressDeadlineSeconds'],
  'k8s.io.api.apps.v1.DeploymentStatus': ['terminatingReplicas', 'collisionCount'],
  'k8s.io.api.apps.v1.ReplicaSetSpec': ['replicas'],
  'k8s.io.api.apps.v1.ReplicaSetStatus': ['terminatingReplicas'],
  'k8s.io.api.apps.v1.DaemonSetSpec': ['revisionHistoryLimit'],
  'k8s.io.api.apps.v1.DaemonSetStatus': ['collisionCount'],
  'k8s.io.api.apps.v1.StatefulSetSpec': ['replicas', 'revisionHistoryLimit'],
  'k8s.io.api.apps.v1.StatefulSetStatus': ['collisionCount'],
  'k8s.io.api.apps.v1.RollingUpdateStatefulSetStrategy': ['partition'],
  'k8s.io.api.batch.v1.JobSpec': [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
    'manualSelector',
    'ttlSecondsAfterFinished',
    'completionMode',
    'suspend',
    'podReplacementPolicy',
    'managedBy',
  ],
  'k8s.io.api.batch.v1.JobStatus': ['terminating', 'failedIndexes', 'ready'],
  'k8s.io.api.batch.v1.CronJobSpec': ['timeZone', 'startingDeadlineSeconds', 'suspend', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit'],
  'k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirement': ['containerName'],
  'k8s.io.api.batch.v1.SuccessPolicyRule': ['succeededIndexes', 'succeededCount'],
  'k8s.io.api.policy.v1.PodDisruptionBudgetSpec': ['unhealthyPodEvictionPolicy'],
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerSpec': ['minReplicas', 'targetCPUUtilizationPercentage'],
  'k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerStatus': ['observedGeneration', 'currentCPUUtilizationPercentage'],
  'k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerSpec': ['minReplicas'],
  'k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerStatus': ['observedGeneration'],
  'k8s.io.api.autoscaling.v2.HPAScalingRules': ['stabilizationWindowSeconds', 'selectPolicy'],
  'k8s.io.api.autoscaling.v2.MetricTarget': ['averageUtilization'],
  'k8s.io.api.autoscaling.v2.MetricValueStatus': ['averageUtilization'],
  'k8s.io.api.coordination.v1.LeaseSpec': ['holderIdentity', 'leaseDurationSeconds', 'leaseTransitions', 'strategy', 'preferredHolder'],
  'k8s.io.api.discovery.v1.Endpoint': ['hostname', 'nodeName', 'zone'],
  'k8s.io.api.discovery.v1.EndpointConditions': ['ready', 'serving', 'terminating'],
  'k8s.io.api.discovery.v1.EndpointPort': ['name', 'protocol', 'port', 'appProtocol'],
  'k8s.io.api.scheduling.v1.PriorityClass': ['preemptionPolicy'],
};

interface Schema {
  properties?: Record<string, unknown>;
  required?: string[];
}
const schemas = components as Record<string, Schema>;
/** k8s.io.api.core.v1.Pod → io.k8s.api.core.v1.Pod, the OpenAPI name of the same Go type. */
const schemaOf = (message: string): Schema | undefined => schemas[message.replace(/^k8s\.io\./, 'io.k8s.')];

function protoFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((entry) => {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) return protoFiles(path);
      return entry.endsWith('.proto') ? [path] : [];
    });
}

function load(protoRoot: string): protobuf.Root {
  const root = new protobuf.Root();
  const files = protoFiles(protoRoot);
  if (files.length === 0) throw new Error(`no .proto files under ${protoRoot}`);
  // Imports are not followed: every file is parsed into one root, which resolves across packages.
  for (const file of files) protobuf.parse(readFileSync(file, 'utf8'), root, { keepCase: true });
  root.resolveAll();
  return root;
}

const fullName = (t: protobuf.Type) => t.fullName.replace(/^\./, '');

/** apiVersion → kind → message, for every kind a request body may carry. */
function servedKinds(root: protobuf.Root): Record<string, Record<string, string>> {
  const kinds: Record<string, Record<string, string>> = {};
  const add = (group: string, version: string, kind: string, message: string) => {
    root.lookupType(message); // throws when the copies lack it
    const apiVersion = group ? `${group}/${version}` : version;
    (kinds[apiVersion] ??= {})[kind] = message;
  };
  for (const r of resources) {
    const pkg = packageOf(r.group, r.version);
    add(r.group, r.version, r.kind, `${pkg}.${r.kind}`);
    add(r.group, r.version, r.listKind, `${pkg}.${r.listKind}`);
    // Typed clients send DeleteOptions in the group version of the resource they delete.
    add(r.group, r.version, 'DeleteOptions', `${META}.DeleteOptions`);
    for (const s of r.subresources) {
      const group = s.group ?? r.group;
      const version = s.version ?? r.version;
      add(group, version, s.kind, `${packageOf(group, version)}.${s.kind}`);
    }
  }
  for (const r of reviewResources) add(r.group, r.version, r.kind, `${packageOf(r.group, r.version)}.${r.kind}`);
  add('meta.k8s.io', 'v1', 'DeleteOptions', `${META}.DeleteOptions`);
  return kinds;
}

function describe(type: protobuf.Type): FieldDescriptor[] {
  const name = fullName(type);
  const schema = schemaOf(name);
  const inlined = new Set(inline[name] ?? []);
  const pointer = new Set(pointers[name] ?? []);
  const renamed = jsonNames[name] ?? {};
  const jsonName = (field: protobuf.Field) => renamed[field.name] ?? field.name;
  for (const f of Object.keys(renamed)) if (!type.fields[f]) throw new Error(`${name} has no proto field ${f}`);
  // A field the 1.33 OpenAPI schema lacks came in a later release; 1.33 skips it as an unknown field.
  const known = (field: protobuf.Field) => inlined.has(field.name) || !schema?.properties || jsonName(field) in schema.properties;
  for (const f of [...inlined, ...pointer]) {
    if (!type.fields[f] || !known(type.fields[f])) throw new Error(`${name} has no 1.33 field ${f}`);
  }
  for (const field of type.fieldsArray) if (!known(field)) console.error(`skipped ${name}.${field.name}: newer than 1.33`);
  return type.fieldsArray
    .filter(known)
    .sort((a, b) => a.id - b.id)
    .map((field) => {
      const resolved = field.resolvedType;
      const d: FieldDescriptor = {
        name: jsonName(field),
        id: field.id,
        type: resolved instanceof protobuf.Type ? fullName(resolved) : field.type,
      };
      if (field.repeated) d.rule = 'repeated';
      if (field instanceof protobuf.MapField) d.keyType = field.keyType;
      const scalar = !resolved && !field.repeated && !d.keyType;
      if (pointer.has(field.name)) {
        if (!scalar) throw new Error(`${name}.${field.name} is listed as a pointer but is not a scalar`);
        d.keepZero = true;
      } else if (scalar && schema?.required?.includes(jsonName(field))) {
        d.keepZero = true;
      }
      if (inlined.has(field.name)) {
        if (!(resolved instanceof protobuf.Type)) throw new Error(`${name}.${field.name} is inlined but is not a message`);
        if (schema && (field.name in (schema.properties ?? {}) || !resolved.fieldsArray.some((f) => f.name in (schema.properties ?? {})))) {
          throw new Error(`${name}.${field.name}: the OpenAPI schema does not inline it`);
        }
        d.inline = true;
      }
      return d;
    });
}

function main(): void {
  const protoRoot = process.argv[2];
  if (!protoRoot) throw new Error('usage: npx tsx scripts/gen-protobuf.ts <proto-root>');
  const root = load(protoRoot);
  const kinds = servedKinds(root);

  const messages = new Map<string, FieldDescriptor[]>();
  const queue = [UNKNOWN, ...Object.values(kinds).flatMap((byKind) => Object.values(byKind))];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (messages.has(name)) continue;
    const fields = describe(root.lookupType(name));
    messages.set(name, fields);
    for (const f of fields) if (root.lookup(f.type) instanceof protobuf.Type) queue.push(f.type);
  }

  for (const name of [...Object.keys(inline), ...Object.keys(pointers)]) {
    if (!messages.has(name)) throw new Error(`${name} is listed but no served kind reaches it`);
  }

  const sortedKinds = Object.fromEntries(
    Object.keys(kinds)
      .sort()
      .map((v) => [v, Object.fromEntries(Object.entries(kinds[v]).sort(([a], [b]) => a.localeCompare(b)))]),
  );
  const lines = [...messages.keys()].sort().map((name) => `${JSON.stringify(name)}:${JSON.stringify(messages.get(name))}`);
  writeFileSync(out, `{"kinds":${JSON.stringify(sortedKinds)},\n"messages":{\n${lines.join(',\n')}\n}}\n`);
  console.log(`wrote ${messages.size} messages for ${Object.values(kinds).reduce((n, k) => n + Object.keys(k).length, 0)} kinds`);
}

main();
