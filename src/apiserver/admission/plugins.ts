// The admission plugin registry, as kube-apiserver's: every plugin upstream knows in its run order
// (AllOrderedPlugins), the ones kite implements registered by their upstream names, and
// --enable-admission-plugins / --disable-admission-plugins on top of upstream's default-on set.
import type { Clock } from '../../util/clock.js';
import type { Registries } from '../registry/registries.js';
import type { Admitter } from '../registry/registry.js';
import { AdmissionChain, type AnyAdmissionPlugin } from './chain.js';
import type { AdmissionLookups } from './interface.js';
import { NamespaceLifecycle, pluginName as namespaceLifecycle } from './plugins/namespacelifecycle.js';
import { DefaultTolerationSeconds, pluginName as defaultTolerationSeconds } from './plugins/defaulttolerationseconds.js';
import { PriorityAdmission, pluginName as priority } from './plugins/priority.js';
import { NodeRestriction, pluginName as nodeRestriction } from './plugins/noderestriction.js';
import { ServiceAccountAdmission, pluginName as serviceAccount } from './plugins/serviceaccount.js';
import { ResourceQuotaAdmission, pluginName as resourceQuota, type ResourceQuotaAccess } from './plugins/resourcequota.js';
import { Selection } from '../registry/selection.js';
import { systemUser } from '../registry/registries.js';
import { everything } from '../../api/labels.js';
import { everythingFields } from '../../api/fields.js';
import type { ResourceQuota } from '../../api/types.js';
import type { KubeObject } from '../../api/meta.js';
import { MutatingAdmissionWebhook, pluginName as mutatingAdmissionWebhook } from './webhook/mutating.js';
import { ValidatingAdmissionWebhook, pluginName as validatingAdmissionWebhook } from './webhook/validating.js';
import { ValidatingAdmissionPolicyPlugin, pluginName as validatingAdmissionPolicy } from './plugins/validatingadmissionpolicy/plugin.js';
import { PodSecurity, pluginName as podSecurity } from './plugins/podsecurity/podsecurity.js';
import { LimitRanger, pluginName as limitRanger } from './plugins/limitranger.js';
import { RuntimeClassAdmission, pluginName as runtimeClass } from './plugins/runtimeclass.js';
import { TaintNodesByCondition, pluginName as taintNodesByCondition } from './plugins/taintnodesbycondition.js';
import { DefaultIngressClass, pluginName as defaultIngressClass } from './plugins/defaultingressclass.js';
import { CertificateApproval, pluginName as certificateApproval } from './plugins/certificateapproval.js';
import { CertificateSigning, pluginName as certificateSigning } from './plugins/certificatesigning.js';
import { CertificateSubjectRestriction, pluginName as certificateSubjectRestriction } from './plugins/certificatesubjectrestriction.js';
import type { Authorize } from './plugins/certificatesigners.js';

/** kube-apiserver 1.33's plugin order: enabled plugins always run in this order, whatever the flags say. */
export const allOrderedPlugins: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/**
 * The plugins upstream runs when no flag says otherwise (the complement of DefaultOffAdmissionPlugins),
 * and NodeRestriction, which kubeadm and k3s turn on.
 */
const defaultOnPlugins: ReadonlySet<string> = new Set([
  'NamespaceLifecycle',
  'NodeRestriction',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
]);

/** What a plugin may be built from: the shared lookups, the server's clock, ResourceQuota's writes and the authorizer. */
export interface PluginDependencies {
  lookups: AdmissionLookups;
  clock: Clock;
  /** Live quota reads and compare-and-swap status writes (upstream's plugin uses the loopback client). */
  resourceQuotas: ResourceQuotaAccess;
  /** The server's authorizer (the certificate plugins ask it about signers). */
  authorize: Authorize;
}

type PluginFactory = (deps: PluginDependencies) => AnyAdmissionPlugin;

/** The plugins kite implements, by upstream name. */
const registered: ReadonlyMap<string, PluginFactory> = new Map<string, PluginFactory>([
  [namespaceLifecycle, ({ lookups, clock }) => new NamespaceLifecycle({ lookups, clock })],
  [serviceAccount, ({ lookups, clock }) => new ServiceAccountAdmission({ lookups, clock })],
  [defaultTolerationSeconds, () => new DefaultTolerationSeconds()],
  [priority, ({ lookups }) => new PriorityAdmission({ lookups })],
  [nodeRestriction, ({ lookups }) => new NodeRestriction({ lookups })],
  [resourceQuota, ({ lookups, clock, resourceQuotas }) => new ResourceQuotaAdmission({ lookups, clock, quotas: resourceQuotas })],
  [mutatingAdmissionWebhook, ({ lookups, clock }) => new MutatingAdmissionWebhook({ lookups, clock })],
  [validatingAdmissionWebhook, ({ lookups, clock }) => new ValidatingAdmissionWebhook({ lookups, clock })],
  [validatingAdmissionPolicy, ({ lookups }) => new ValidatingAdmissionPolicyPlugin({ lookups })],
  [podSecurity, ({ lookups }) => new PodSecurity({ lookups })],
  [limitRanger, ({ lookups }) => new LimitRanger({ lookups })],
  [runtimeClass, ({ lookups }) => new RuntimeClassAdmission({ lookups })],
  [taintNodesByCondition, () => new TaintNodesByCondition()],
  [defaultIngressClass, ({ lookups }) => new DefaultIngressClass({ lookups })],
  [certificateApproval, ({ authorize }) => new CertificateApproval(authorize)],
  [certificateSigning, ({ authorize }) => new CertificateSigning(authorize)],
  [certificateSubjectRestriction, () => new CertificateSubjectRestriction()],
]);

export interface AdmissionPluginFlags {
  /** --enable-admission-plugins: on top of the default-on ones. */
  enable?: readonly string[];
  /** --disable-admission-plugins: off even when on by default; enable wins over disable, as upstream. */
  disable?: readonly string[];
}

/**
 * The enabled plugin names in run order. A name upstream does not know is an error; so is enabling
 * one kite does not implement (upstream default-on plugins kite lacks are simply absent).
 */
export function enabledPluginNames(flags: AdmissionPluginFlags = {}): string[] {
  const known = new Set(allOrderedPlugins);
  for (const [flag, names] of [['enable', flags.enable], ['disable', flags.disable]] as const) {
    for (const name of names ?? []) if (!known.has(name)) throw new Error(`${flag}-admission-plugins plugin "${name}" is unknown`);
  }
  for (const name of flags.enable ?? []) {
    if (!registered.has(name)) throw new Error(`enable-admission-plugins plugin "${name}" is not implemented by kite (it has ${[...registered.keys()].join(', ')})`);
  }
  const enable = new Set(flags.enable);
  const disable = new Set(flags.disable);
  return allOrderedPlugins.filter((name) => registered.has(name) && (enable.has(name) || (defaultOnPlugins.has(name) && !disable.has(name))));
}

/** The enabled plugins, built in run order. */
export function newAdmissionPlugins(deps: PluginDependencies, flags?: AdmissionPluginFlags): AnyAdmissionPlugin[] {
  return enabledPluginNames(flags).map((name) => registered.get(name)!(deps));
}

/**
 * What the registries call on every write: the enabled plugins in order, looking objects up in the
 * registries' caches (with a live read on a miss). `registries` is asked lazily: they are built
 * with this admitter; `authorize` is the server's authorizer (asked per call, as it is built later).
 */
export function newAdmitter(registries: () => Registries, clock: Clock, authorize: Authorize, flags?: AdmissionPluginFlags): Admitter {
  const lookups: AdmissionLookups = {
    get: (resource, namespace, name) => registries().lookup(resource, namespace, name),
    list: async (resource) => registries().cachedList(resource),
  };
  const quotas = () => registries().of('', 'resourcequotas');
  const resourceQuotas: ResourceQuotaAccess = {
    list: async (namespace) => (await quotas().list(namespace, { selection: new Selection(everything(), everythingFields()) })).items as ResourceQuota[],
    updateStatus: async (quota) => {
      const { namespace = '', name = '' } = quota.metadata ?? {};
      // The quota carries the resourceVersion it was read at: the registry refuses the write with a 409 if it moved.
      await quotas().update(namespace, name, () => quota as KubeObject, { dryRun: false, user: systemUser, subresource: 'status' });
    },
  };
  const chain = new AdmissionChain(newAdmissionPlugins({ lookups, clock, resourceQuotas, authorize }, flags));
  return {
    mutate: (operation, a) => chain.admit({ operation, ...a }),
    validate: (operation, a) => chain.validate({ operation, ...a }),
  };
}
