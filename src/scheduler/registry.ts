// The in-tree plugins and the default profile. To add a plugin: give it a folder under plugins/,
// register its factory here, and put it in defaultPlugins at upstream's position (the order is the
// order Filter and Score run in). Upstream's default multiPoint order (volume plugins are not here):
// SchedulingGates, PrioritySort, NodeUnschedulable, NodeName, TaintToleration (3), NodeAffinity (2),
// NodePorts, NodeResourcesFit (1), [volume plugins], PodTopologySpread (2), InterPodAffinity (2),
// DefaultPreemption, NodeResourcesBalancedAllocation (1), ImageLocality (1), DefaultBinder.
import type { PluginConfig, Profile, Registry } from './framework/runtime.js';
import * as balancedAllocation from './plugins/balancedallocation/balancedallocation.js';
import * as defaultBinder from './plugins/defaultbinder/defaultbinder.js';
import * as defaultPreemption from './plugins/defaultpreemption/defaultpreemption.js';
import * as imageLocality from './plugins/imagelocality/imagelocality.js';
import * as interPodAffinity from './plugins/interpodaffinity/interpodaffinity.js';
import * as nodeAffinity from './plugins/nodeaffinity/nodeaffinity.js';
import * as nodeName from './plugins/nodename/nodename.js';
import * as nodePorts from './plugins/nodeports/nodeports.js';
import * as nodeResourcesFit from './plugins/noderesourcesfit/noderesourcesfit.js';
import * as nodeUnschedulable from './plugins/nodeunschedulable/nodeunschedulable.js';
import * as podTopologySpread from './plugins/podtopologyspread/podtopologyspread.js';
import * as prioritySort from './plugins/prioritysort/prioritysort.js';
import * as schedulingGates from './plugins/schedulinggates/schedulinggates.js';
import * as taintToleration from './plugins/tainttoleration/tainttoleration.js';

export const inTreeRegistry: Registry = {
  [schedulingGates.NAME]: schedulingGates.factory,
  [prioritySort.NAME]: prioritySort.factory,
  [nodeUnschedulable.NAME]: nodeUnschedulable.factory,
  [nodeName.NAME]: nodeName.factory,
  [taintToleration.NAME]: taintToleration.factory,
  [nodeAffinity.NAME]: nodeAffinity.factory,
  [nodePorts.NAME]: nodePorts.factory,
  [nodeResourcesFit.NAME]: nodeResourcesFit.factory,
  [podTopologySpread.NAME]: podTopologySpread.factory,
  [interPodAffinity.NAME]: interPodAffinity.factory,
  [defaultPreemption.NAME]: defaultPreemption.factory,
  [balancedAllocation.NAME]: balancedAllocation.factory,
  [imageLocality.NAME]: imageLocality.factory,
  [defaultBinder.NAME]: defaultBinder.factory,
};

/** Upstream's default multiPoint plugins with their score weights. */
export const defaultPlugins: readonly PluginConfig[] = [
  { name: schedulingGates.NAME },
  { name: prioritySort.NAME },
  { name: nodeUnschedulable.NAME },
  { name: nodeName.NAME },
  { name: taintToleration.NAME, weight: 3 },
  { name: nodeAffinity.NAME, weight: 2 },
  { name: nodePorts.NAME },
  { name: nodeResourcesFit.NAME, weight: 1 },
  { name: podTopologySpread.NAME, weight: 2 },
  { name: interPodAffinity.NAME, weight: 2 },
  { name: defaultPreemption.NAME },
  { name: balancedAllocation.NAME, weight: 1 },
  { name: imageLocality.NAME, weight: 1 },
  { name: defaultBinder.NAME },
];

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export const defaultProfile = (): Profile => ({ schedulerName: DEFAULT_SCHEDULER_NAME, plugins: [...defaultPlugins] });
