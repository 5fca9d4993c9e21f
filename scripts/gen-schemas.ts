// Regenerates src/api/schemas/components.json: the OpenAPI v3 component schemas of every served kind
// (src/api/resources.ts, the stored and the review ones), of the kinds their subresources answer with, of the meta kinds every group
// serves (Status, DeleteOptions, WatchEvent, Patch), and of everything they reference.
//
//   npx tsx scripts/gen-schemas.ts
//
// Rerun it when resources.ts serves a new kind (src/api/schema.test.ts fails until then). It stops on
// a patchMeta entry that matches no generated field, so a typo there cannot go unnoticed.
//
// Sources, all read from node_modules so the output is deterministic:
// - kubernetes-types (.d.ts generated from upstream's OpenAPI): field names, nesting, required fields
//   and descriptions.
// - @kubernetes/client-node's models (generated from a newer upstream): integer formats (int32/int64)
//   and `byte`, looked up per (type, field); and the fields upstream added between 1.30 and 1.33
//   (`added` below) with their types and descriptions. Fields it has that 1.33 lacks stay out.
// - `patchMeta` below: the strategic-merge and list/map-type markers of upstream's Go types
//   (k8s.io/api 1.33), which neither package carries.
// Schema names, `allOf` wrapping of refs and the x-kubernetes-* extensions follow upstream's
// /openapi/v3 documents, so the data can be served as is.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { resources, reviewResources } from '../src/api/resources.js';

type Json = Record<string, unknown>;

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const typesDir = dirname(createRequire(import.meta.url).resolve('kubernetes-types/package.json'));
const out = join(projectRoot, 'src/api/schemas/components.json');

const ref = (name: string) => `#/components/schemas/${name}`;
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';

/** kubernetes-types module path (e.g. `core/v1`) → upstream schema-name prefix. */
function packageOf(module: string): string {
  if (module === 'meta/v1') return META;
  if (module === 'api/resource') return 'io.k8s.apimachinery.pkg.api.resource';
  if (module === 'runtime') return 'io.k8s.apimachinery.pkg.runtime';
  return `io.k8s.api.${module.replace('/', '.')}`;
}

// ---- patch and list metadata (upstream's +patchStrategy/+patchMergeKey/+listType/+mapType markers)

interface Ext {
  'x-kubernetes-patch-strategy'?: string;
  'x-kubernetes-patch-merge-key'?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}
/** A list merged by key: patchStrategy merge (or merge,retainKeys) and a list-map on the same keys. */
const keyed = (keys: string[], strategy = 'merge'): Ext => ({
  'x-kubernetes-list-map-keys': keys,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-patch-merge-key': keys[0],
  'x-kubernetes-patch-strategy': strategy,
});
const atomic: Ext = { 'x-kubernetes-list-type': 'atomic' };
const set: Ext = { 'x-kubernetes-list-type': 'set' };
const mapAtomic: Ext = { 'x-kubernetes-map-type': 'atomic' };
const listMap = (keys: string[]): Ext => ({ 'x-kubernetes-list-map-keys': keys, 'x-kubernetes-list-type': 'map' });

const core = 'io.k8s.api.core.v1';
/** `<schema>.<field>` → extensions; `<schema>` alone → extensions on the schema itself (structType=atomic). */
const patchMeta: Record<string, Ext> = {
  [`${META}.ObjectMeta.finalizers`]: { 'x-kubernetes-list-type': 'set', 'x-kubernetes-patch-strategy': 'merge' },
  [`${META}.ObjectMeta.ownerReferences`]: keyed(['uid']),
  [`${META}.ObjectMeta.managedFields`]: atomic,
  [`${META}.OwnerReference`]: mapAtomic,
  [`${META}.LabelSelector`]: mapAtomic,
  [`${META}.LabelSelector.matchExpressions`]: atomic,
  [`${META}.LabelSelectorRequirement.values`]: atomic,
  [`${META}.StatusDetails.causes`]: atomic,
  [`${META}.DeleteOptions.dryRun`]: atomic,
  [`${core}.PodSpec.volumes`]: keyed(['name'], 'merge,retainKeys'),
  [`${core}.PodSpec.initContainers`]: keyed(['name']),
  [`${core}.PodSpec.containers`]: keyed(['name']),
  [`${core}.PodSpec.ephemeralContainers`]: keyed(['name']),
  [`${core}.PodSpec.imagePullSecrets`]: keyed(['name']),
  [`${core}.PodSpec.hostAliases`]: keyed(['ip']),
  [`${core}.PodSpec.tolerations`]: atomic,
  [`${core}.PodSpec.readinessGates`]: atomic,
  [`${core}.PodSpec.topologySpreadConstraints`]: keyed(['topologyKey', 'whenUnsatisfiable']),
  [`${core}.PodSpec.resourceClaims`]: keyed(['name'], 'merge,retainKeys'),
  [`${core}.PodSpec.schedulingGates`]: keyed(['name']),
  [`${core}.PodSpec.nodeSelector`]: mapAtomic,
  [`${core}.PodSecurityContext.supplementalGroups`]: atomic,
  [`${core}.PodSecurityContext.sysctls`]: atomic,
  [`${core}.PodDNSConfig.nameservers`]: atomic,
  [`${core}.PodDNSConfig.searches`]: atomic,
  [`${core}.PodDNSConfig.options`]: atomic,
  [`${core}.HostAlias.hostnames`]: atomic,
  ...containerMeta('Container'),
  ...containerMeta('EphemeralContainer'),
  [`${core}.ResourceRequirements.claims`]: listMap(['name']),
  [`${core}.Capabilities.add`]: atomic,
  [`${core}.Capabilities.drop`]: atomic,
  [`${core}.ExecAction.command`]: atomic,
  [`${core}.HTTPGetAction.httpHeaders`]: atomic,
  [`${core}.ConfigMapVolumeSource.items`]: atomic,
  [`${core}.SecretVolumeSource.items`]: atomic,
  [`${core}.DownwardAPIVolumeSource.items`]: atomic,
  [`${core}.ProjectedVolumeSource.sources`]: atomic,
  [`${core}.ConfigMapProjection.items`]: atomic,
  [`${core}.SecretProjection.items`]: atomic,
  [`${core}.DownwardAPIProjection.items`]: atomic,
  [`${core}.ISCSIVolumeSource.portals`]: atomic,
  [`${core}.FCVolumeSource.targetWWNs`]: atomic,
  [`${core}.FCVolumeSource.wwids`]: atomic,
  [`${core}.CephFSVolumeSource.monitors`]: atomic,
  [`${core}.RBDVolumeSource.monitors`]: atomic,
  [`${core}.PersistentVolumeClaimSpec.accessModes`]: atomic,
  [`${core}.NodeSelector`]: mapAtomic,
  [`${core}.NodeSelector.nodeSelectorTerms`]: atomic,
  [`${core}.NodeSelectorTerm`]: mapAtomic,
  [`${core}.NodeSelectorTerm.matchExpressions`]: atomic,
  [`${core}.NodeSelectorTerm.matchFields`]: atomic,
  [`${core}.NodeSelectorRequirement.values`]: atomic,
  [`${core}.NodeAffinity.preferredDuringSchedulingIgnoredDuringExecution`]: atomic,
  [`${core}.PodAffinity.requiredDuringSchedulingIgnoredDuringExecution`]: atomic,
  [`${core}.PodAffinity.preferredDuringSchedulingIgnoredDuringExecution`]: atomic,
  [`${core}.PodAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution`]: atomic,
  [`${core}.PodAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution`]: atomic,
  [`${core}.PodAffinityTerm.namespaces`]: atomic,
  [`${core}.PodAffinityTerm.matchLabelKeys`]: atomic,
  [`${core}.PodAffinityTerm.mismatchLabelKeys`]: atomic,
  [`${core}.TopologySpreadConstraint.matchLabelKeys`]: atomic,
  [`${core}.PodStatus.conditions`]: keyed(['type']),
  [`${core}.PodStatus.podIPs`]: keyed(['ip']),
  [`${core}.PodStatus.hostIPs`]: { ...atomic, 'x-kubernetes-patch-merge-key': 'ip', 'x-kubernetes-patch-strategy': 'merge' },
  [`${core}.PodStatus.initContainerStatuses`]: atomic,
  [`${core}.PodStatus.containerStatuses`]: atomic,
  [`${core}.PodStatus.ephemeralContainerStatuses`]: atomic,
  [`${core}.PodStatus.resourceClaimStatuses`]: keyed(['name'], 'merge,retainKeys'),
  [`${core}.ContainerStatus.volumeMounts`]: keyed(['mountPath']),
  [`${core}.ContainerStatus.allocatedResourcesStatus`]: keyed(['name']),
  [`${core}.ResourceStatus.resources`]: listMap(['resourceID']),
  [`${core}.LinuxContainerUser.supplementalGroups`]: atomic,
  [`${core}.NodeSpec.podCIDRs`]: { ...set, 'x-kubernetes-patch-strategy': 'merge' },
  [`${core}.NodeSpec.taints`]: atomic,
  [`${core}.NodeStatus.conditions`]: keyed(['type']),
  [`${core}.NodeStatus.addresses`]: keyed(['type']),
  [`${core}.NodeStatus.images`]: atomic,
  [`${core}.NodeStatus.volumesInUse`]: atomic,
  [`${core}.NodeStatus.volumesAttached`]: atomic,
  [`${core}.NodeStatus.runtimeHandlers`]: atomic,
  [`${core}.ContainerImage.names`]: atomic,
  [`${core}.NamespaceSpec.finalizers`]: atomic,
  [`${core}.NamespaceStatus.conditions`]: keyed(['type']),
  [`${core}.ServiceSpec.ports`]: keyed(['port', 'protocol']),
  [`${core}.ServiceSpec.selector`]: mapAtomic,
  [`${core}.ServiceSpec.clusterIPs`]: atomic,
  [`${core}.ServiceSpec.externalIPs`]: atomic,
  [`${core}.ServiceSpec.loadBalancerSourceRanges`]: atomic,
  [`${core}.ServiceSpec.ipFamilies`]: atomic,
  [`${core}.ServiceStatus.conditions`]: keyed(['type']),
  [`${core}.LoadBalancerStatus.ingress`]: atomic,
  [`${core}.LoadBalancerIngress.ports`]: atomic,
  [`${core}.ServiceAccount.secrets`]: keyed(['name']),
  [`${core}.ServiceAccount.imagePullSecrets`]: atomic,
  [`${core}.Endpoints.subsets`]: atomic,
  [`${core}.EndpointSubset.addresses`]: atomic,
  [`${core}.EndpointSubset.notReadyAddresses`]: atomic,
  [`${core}.EndpointSubset.ports`]: atomic,
  [`${core}.ObjectReference`]: mapAtomic,
  [`${core}.LocalObjectReference`]: mapAtomic,
  [`${core}.ConfigMapKeySelector`]: mapAtomic,
  [`${core}.SecretKeySelector`]: mapAtomic,
  [`${core}.ObjectFieldSelector`]: mapAtomic,
  [`${core}.ResourceFieldSelector`]: mapAtomic,
  [`${core}.TypedLocalObjectReference`]: mapAtomic,
  [`${core}.ReplicationControllerSpec.selector`]: mapAtomic,
  [`${core}.ReplicationControllerStatus.conditions`]: keyed(['type']),
  'io.k8s.api.apps.v1.DeploymentSpec.strategy': { 'x-kubernetes-patch-strategy': 'retainKeys' },
  'io.k8s.api.apps.v1.DeploymentStatus.conditions': keyed(['type']),
  'io.k8s.api.apps.v1.ReplicaSetStatus.conditions': keyed(['type']),
  'io.k8s.api.apps.v1.DaemonSetStatus.conditions': keyed(['type']),
  'io.k8s.api.apps.v1.StatefulSetSpec.volumeClaimTemplates': atomic,
  'io.k8s.api.apps.v1.StatefulSetStatus.conditions': keyed(['type']),
  'io.k8s.api.batch.v1.PodFailurePolicy.rules': atomic,
  'io.k8s.api.batch.v1.PodFailurePolicyRule.onPodConditions': atomic,
  'io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement.values': set,
  'io.k8s.api.batch.v1.SuccessPolicy.rules': atomic,
  'io.k8s.api.batch.v1.JobStatus.conditions': { ...atomic, 'x-kubernetes-patch-merge-key': 'type', 'x-kubernetes-patch-strategy': 'merge' },
  'io.k8s.api.batch.v1.UncountedTerminatedPods.succeeded': set,
  'io.k8s.api.batch.v1.UncountedTerminatedPods.failed': set,
  'io.k8s.api.batch.v1.CronJobStatus.active': atomic,
  'io.k8s.api.policy.v1.PodDisruptionBudgetSpec.selector': { 'x-kubernetes-patch-strategy': 'replace' },
  'io.k8s.api.policy.v1.PodDisruptionBudgetStatus.conditions': keyed(['type']),
  'io.k8s.api.autoscaling.v1.CrossVersionObjectReference': mapAtomic,
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerSpec.metrics': atomic,
  'io.k8s.api.autoscaling.v2.HPAScalingRules.policies': atomic,
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus.currentMetrics': atomic,
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus.conditions': keyed(['type']),
  'io.k8s.api.discovery.v1.EndpointSlice.endpoints': atomic,
  'io.k8s.api.discovery.v1.EndpointSlice.ports': atomic,
  'io.k8s.api.networking.v1.NetworkPolicySpec.ingress': atomic,
  'io.k8s.api.networking.v1.NetworkPolicySpec.egress': atomic,
  'io.k8s.api.networking.v1.NetworkPolicySpec.policyTypes': atomic,
  'io.k8s.api.networking.v1.NetworkPolicyIngressRule.ports': atomic,
  'io.k8s.api.networking.v1.NetworkPolicyIngressRule.from': atomic,
  'io.k8s.api.networking.v1.NetworkPolicyEgressRule.ports': atomic,
  'io.k8s.api.networking.v1.NetworkPolicyEgressRule.to': atomic,
  'io.k8s.api.networking.v1.IPBlock.except': atomic,
  'io.k8s.api.networking.v1.ServiceCIDRSpec.cidrs': atomic,
  'io.k8s.api.networking.v1.ServiceCIDRStatus.conditions': keyed(['type']),
  'io.k8s.api.discovery.v1.Endpoint.addresses': set,
  'io.k8s.api.discovery.v1.EndpointHints.forZones': atomic,
  'io.k8s.api.discovery.v1.EndpointHints.forNodes': atomic,
  'io.k8s.api.discovery.v1.EndpointPort': mapAtomic,
  'io.k8s.api.certificates.v1.CertificateSigningRequestSpec.request': atomic,
  'io.k8s.api.certificates.v1.CertificateSigningRequestSpec.usages': atomic,
  'io.k8s.api.certificates.v1.CertificateSigningRequestSpec.groups': atomic,
  'io.k8s.api.certificates.v1.CertificateSigningRequestStatus.conditions': listMap(['type']),
  'io.k8s.api.certificates.v1.CertificateSigningRequestStatus.certificate': atomic,
};

function containerMeta(kind: string): Record<string, Ext> {
  const p = `${core}.${kind}`;
  return {
    [`${p}.command`]: atomic,
    [`${p}.args`]: atomic,
    [`${p}.ports`]: keyed(['containerPort', 'protocol']),
    [`${p}.envFrom`]: atomic,
    [`${p}.env`]: keyed(['name']),
    [`${p}.resizePolicy`]: atomic,
    [`${p}.volumeMounts`]: keyed(['mountPath']),
    [`${p}.volumeDevices`]: keyed(['devicePath']),
  };
}

/** Fields that upstream added after kubernetes-types' 1.30 and has in 1.33. */
const added: Record<string, string[]> = {
  'io.k8s.api.apps.v1.DeploymentStatus': ['terminatingReplicas'],
  'io.k8s.api.apps.v1.ReplicaSetStatus': ['terminatingReplicas'],
  'io.k8s.api.coordination.v1.LeaseSpec': ['preferredHolder', 'strategy'],
  [`${core}.ContainerStatus`]: ['allocatedResourcesStatus', 'stopSignal', 'user'],
  [`${core}.Lifecycle`]: ['stopSignal'],
  [`${core}.NodeRuntimeHandlerFeatures`]: ['userNamespaces'],
  [`${core}.NodeStatus`]: ['features'],
  [`${core}.NodeSystemInfo`]: ['swap'],
  [`${core}.PodCondition`]: ['observedGeneration'],
  [`${core}.PodResourceClaim`]: ['resourceClaimName', 'resourceClaimTemplateName'],
  [`${core}.PodSecurityContext`]: ['seLinuxChangePolicy', 'supplementalGroupsPolicy'],
  [`${core}.PodSpec`]: ['resources'],
  [`${core}.PodStatus`]: ['observedGeneration'],
  [`${core}.ResourceClaim`]: ['request'],
  [`${core}.Volume`]: ['image'],
  'io.k8s.api.discovery.v1.EndpointHints': ['forNodes'],
  'io.k8s.api.autoscaling.v2.HPAScalingRules': ['tolerance'],
  // Not new upstream: kubernetes-types 1.30's ResourceRule lacks them (client-node's model has them).
  'io.k8s.api.authorization.v1.ResourceRule': ['resources', 'verbs'],
  // Nor do its admission rules have the fields upstream inlines from Rule.
  'io.k8s.api.admissionregistration.v1.NamedRuleWithOperations': ['resources', 'scope'],
  'io.k8s.api.admissionregistration.v1.RuleWithOperations': ['resources', 'scope'],
  [`${META}.DeleteOptions`]: ['ignoreStoreReadErrorWithClusterBreakingPotential'],
};
/** Fields that upstream removed by 1.33 (PodResourceClaim.source became the two fields above in 1.31). */
const removed = new Set([`${core}.PodResourceClaim.source`]);

// ---- reading kubernetes-types (and client-node's models for `added`)

interface Decl {
  module: string;
  node: ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration;
  imports: Map<string, string>; // imported name → module
  fromClient?: boolean; // a client-node model: references are its class names (V1Foo)
}
const modules = new Map<string, Map<string, Decl>>();

/** Kinds GA after 1.30 whose GA version kubernetes-types lacks: read from the older version, same shape. */
const promoted: Record<string, string> = { 'networking/v1': 'networking/v1alpha1' };

function loadModule(module: string): Map<string, Decl> {
  let decls = modules.get(module);
  if (decls) return decls;
  decls = new Map();
  modules.set(module, decls);
  readDecls(module, module, decls);
  if (promoted[module]) readDecls(promoted[module], module, decls);
  return decls;
}

/** The declarations of kubernetes-types/<source>, placed in `module` (a name already there wins). */
function readDecls(source: string, module: string, decls: Map<string, Decl>): void {
  const file = ts.createSourceFile(source, readFileSync(join(typesDir, `${source}.d.ts`), 'utf8'), ts.ScriptTarget.ES2022, true);
  const imports = new Map<string, string>();
  for (const st of file.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const from = join(dirname(source), st.moduleSpecifier.text);
      const named = st.importClause?.namedBindings;
      if (named && ts.isNamedImports(named)) for (const el of named.elements) imports.set(el.name.text, from);
    } else if ((ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) && !decls.has(st.name.text)) {
      decls.set(st.name.text, { module, node: st, imports });
    }
  }
}

/** JSDoc text as upstream's description: paragraphs joined by a blank line. */
function docOf(node: ts.Node): string | undefined {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const text = docs.map((d) => (typeof d.comment === 'string' ? d.comment : (ts.getTextOfJSDocComment(d.comment) ?? ''))).join('\n');
  return text.trim() ? text.trim() : undefined;
}

// ---- formats from @kubernetes/client-node

// Read as text: the package's entry point needs a newer Node than the project's, and only the data is wanted.
const modelsDir = join(projectRoot, 'node_modules/@kubernetes/client-node/dist/gen/models');
function attributes(cls: string): { baseName: string; format: string }[] | undefined {
  const file = join(modelsDir, `${cls}.js`);
  if (!existsSync(file)) return undefined;
  const m = /\.attributeTypeMap = (\[[\s\S]*?\]);/.exec(readFileSync(file, 'utf8'));
  return m ? (JSON.parse(m[1]) as { baseName: string; format: string }[]) : undefined;
}

/** client-node names a model V1Pod, or CoreV1Event/EventsV1Event when the bare name collides. */
function clientClassOf(schemaName: string): string {
  const parts = schemaName.split('.');
  const [type, version, group] = [parts[parts.length - 1], parts[parts.length - 2], parts[parts.length - 3]];
  const cap = (s: string) => s[0].toUpperCase() + s.slice(1);
  const prefixed = `${cap(group)}${cap(version)}${type}`;
  return existsSync(join(modelsDir, `${prefixed}.js`)) ? prefixed : `${cap(version)}${type}`;
}

function formatOf(schemaName: string, field: string): string | undefined {
  return attributes(clientClassOf(schemaName))?.find((a) => a.baseName === field)?.format || undefined;
}

// ---- conversion

const components: Record<string, Json> = {};
const pending: { name: string; decl: Decl }[] = [];

function nameOf(decl: Decl): string {
  return `${packageOf(decl.module)}.${decl.node.name!.text.replace(decl.fromClient ? /^V1/ : /^$/, '')}`;
}

/** A client-node model class, placed in the module of the type that references it. */
function clientDecl(cls: string, module: string): Decl {
  const file = ts.createSourceFile(cls, readFileSync(join(modelsDir, `${cls}.d.ts`), 'utf8'), ts.ScriptTarget.ES2022, true);
  const node = file.statements.find(ts.isClassDeclaration);
  if (!node) throw new Error(`no class in ${cls}.d.ts`);
  return { module, node, imports: new Map(), fromClient: true };
}

function resolve(typeName: string, from: Decl): Decl {
  if (from.fromClient) {
    const bare = typeName.replace(/^V1/, '');
    return loadModule(from.module).get(bare) ?? clientDecl(typeName, from.module);
  }
  const module = from.imports.get(typeName) ?? from.module;
  const decl = loadModule(module).get(typeName);
  if (!decl) throw new Error(`${typeName} not found in kubernetes-types/${module}`);
  return decl;
}

/** Schema of a referenced declaration (queued for conversion), as `{$ref}`. */
function refTo(decl: Decl): Json {
  const name = nameOf(decl);
  if (!(name in components)) {
    components[name] = {};
    pending.push({ name, decl });
  }
  return { $ref: ref(name) };
}

function intOrStringRef(): Json {
  components[INT_OR_STRING] ??= {
    description:
      'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.',
    format: 'int-or-string',
    oneOf: [{ type: 'integer' }, { type: 'string' }],
  };
  return { $ref: ref(INT_OR_STRING) };
}

function convertType(t: ts.TypeNode, from: Decl, owner: string, field: string): Json {
  if (t.kind === ts.SyntaxKind.StringKeyword || ts.isLiteralTypeNode(t)) return { type: 'string' };
  if (t.kind === ts.SyntaxKind.BooleanKeyword) return { type: 'boolean' };
  if (t.kind === ts.SyntaxKind.NumberKeyword) {
    const format = formatOf(owner, field);
    if (format === 'double' || format === 'float') return { format: 'double', type: 'number' };
    return format ? { format, type: 'integer' } : { type: 'integer' };
  }
  if (ts.isUnionTypeNode(t)) return intOrStringRef(); // the only union kubernetes-types emits is `number | string`
  if (ts.isTypeLiteralNode(t)) {
    const index = t.members.find(ts.isIndexSignatureDeclaration);
    if (!index) throw new Error(`unexpected inline object in ${owner}.${field}`);
    const value = convertType(index.type, from, owner, field);
    if (value.type === 'string' && formatOf(owner, field) === 'byte') value.format = 'byte';
    return { additionalProperties: value, type: 'object' };
  }
  if (ts.isTypeReferenceNode(t) && ts.isIdentifier(t.typeName)) {
    if (t.typeName.text === 'Array' && t.typeArguments?.length === 1) {
      return { items: convertType(t.typeArguments[0], from, owner, field), type: 'array' };
    }
    return refTo(resolve(t.typeName.text, from));
  }
  throw new Error(`unsupported type ${ts.SyntaxKind[t.kind]} in ${owner}.${field}`);
}

/** A property: refs that carry siblings (description, extensions) are wrapped in allOf, as upstream does. */
type Member = ts.PropertySignature | ts.PropertyDeclaration;
const fieldName = (m: Member) => (m.name as ts.Identifier | ts.StringLiteral).text;

function property(member: Member, from: Decl, owner: string): Json {
  const field = fieldName(member);
  const schema = convertType(member.type!, from, owner, field);
  const description = docOf(member);
  const meta = patchMeta[`${owner}.${field}`] ?? {};
  if (schema.$ref) return { allOf: [schema], ...(description ? { description } : {}), ...meta };
  return { ...(description ? { description } : {}), ...schema, ...meta };
}

function convertDecl(name: string, decl: Decl): Json {
  const description = docOf(decl.node);
  const base = description ? { description } : {};
  if (ts.isTypeAliasDeclaration(decl.node)) {
    // Time, MicroTime and Quantity are strings on the wire; upstream's v3 lets a Quantity be a number too.
    if (decl.node.name.text === 'Quantity') return { ...base, oneOf: [{ type: 'string' }, { type: 'number' }] };
    return { ...base, format: 'date-time', type: 'string' };
  }
  const properties: Record<string, Json> = {};
  const required: string[] = [];
  const take = (member: Member, from: Decl) => {
    const field = fieldName(member);
    if (removed.has(`${name}.${field}`)) return;
    properties[field] = property(member, from, name);
    if (!member.questionToken) required.push(field);
  };
  const isStatic = (m: ts.ClassElement) => ts.getCombinedModifierFlags(m) & ts.ModifierFlags.Static;
  for (const member of decl.node.members as ts.NodeArray<ts.Node>) {
    if (ts.isPropertySignature(member) || (ts.isPropertyDeclaration(member) && !isStatic(member))) take(member, decl);
  }
  if (added[name]) {
    const cls = clientDecl(clientClassOf(name), decl.module);
    for (const field of added[name]) {
      const member = (cls.node as ts.ClassDeclaration).members.find((m): m is ts.PropertyDeclaration => ts.isPropertyDeclaration(m) && fieldName(m) === field);
      if (!member) throw new Error(`${name}.${field} not in client-node's model`);
      take(member, cls);
    }
  }
  const schema: Json = { ...base };
  if (Object.keys(properties).length) schema.properties = sortKeys(properties);
  if (required.length) schema.required = required;
  return { ...schema, type: 'object', ...(patchMeta[name] ?? {}) };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// ---- roots and GVKs

const gvks = new Map<string, { group: string; kind: string; version: string }[]>();
function addRoot(module: string, type: string, gvk?: { group: string; version: string; kind: string }[]): void {
  const decl = loadModule(module).get(type);
  if (!decl) throw new Error(`${type} not found in kubernetes-types/${module}`);
  refTo(decl);
  if (gvk) gvks.set(nameOf(decl), gvk.map(({ group, kind, version }) => ({ group, kind, version })));
}
const moduleFor = (group: string, version: string) => `${group === '' ? 'core' : group.split('.')[0]}/${version}`;

const served = new Set<string>();
for (const r of resources) {
  for (const kind of [r.kind, r.listKind]) addRoot(moduleFor(r.group, r.version), kind, [{ group: r.group, version: r.version, kind }]);
  served.add(`${r.group}/${r.version}`);
  for (const s of r.subresources) {
    const group = s.group ?? r.group;
    const version = s.version ?? r.version;
    if (loadModule(moduleFor(group, version)).has(s.kind)) addRoot(moduleFor(group, version), s.kind, [{ group, version, kind: s.kind }]);
  }
}
// Review kinds have no list: they are only ever created.
for (const r of reviewResources) {
  addRoot(moduleFor(r.group, r.version), r.kind, [{ group: r.group, version: r.version, kind: r.kind }]);
  served.add(`${r.group}/${r.version}`);
}
const everyGroup = (kind: string) => [...served].sort().map((gv) => ({ group: gv.split('/')[0], version: gv.split('/')[1], kind }));
addRoot('meta/v1', 'Status', [{ group: '', version: 'v1', kind: 'Status' }]);
addRoot('meta/v1', 'DeleteOptions', everyGroup('DeleteOptions'));
addRoot('meta/v1', 'WatchEvent', everyGroup('WatchEvent'));
addRoot('meta/v1', 'Patch'); // the PATCH request body in the OpenAPI documents

while (pending.length) {
  const { name, decl } = pending.shift()!;
  components[name] = convertDecl(name, decl);
  const gvk = gvks.get(name);
  if (gvk) components[name]['x-kubernetes-group-version-kind'] = gvk;
}

for (const key of Object.keys(patchMeta)) {
  const [schema, field] = [key.slice(0, key.lastIndexOf('.')), key.slice(key.lastIndexOf('.') + 1)];
  const known = components[key] ?? (components[schema]?.properties as Json | undefined)?.[field];
  if (!known) throw new Error(`patchMeta entry ${key} matches no served field`);
}

// One schema per line: small diffs, still compact.
const sorted = sortKeys(components);
const lines = Object.entries(sorted).map(([name, schema]) => `${JSON.stringify(name)}:${JSON.stringify(schema)}`);
writeFileSync(out, `{\n${lines.join(',\n')}\n}\n`);
console.log(`wrote ${Object.keys(sorted).length} schemas to ${out.slice(projectRoot.length + 1)}`);
