// Linux cgroup settings for containers and sandboxes as upstream's kuberuntime_container_linux.go
// computes them: cpu shares from requests, a CFS quota from limits, the memory limit, and the OOM
// score adjustment by QoS class (pkg/kubelet/qos/policy.go). containerd here runs with
// restrict_oom_score_adj, so it clamps scores below its own; the value sent is still upstream's.
import type { Container, Pod, ResourceRequirements } from '../../api/types.js';
import { Quantity } from '../../api/quantity.js';
import { qosClass } from '../../api/pod/qos.js';
import type { LinuxContainerResources } from '../runtime/types.js';

export const MIN_SHARES = 2;
export const MAX_SHARES = 262144;
export const SHARES_PER_CPU = 1024;
export const MILLI_CPU_TO_CPU = 1000;
/** The CFS period (100 ms, in µs) and the smallest quota the kernel accepts (1 ms). */
export const QUOTA_PERIOD = 100000;
export const MIN_QUOTA_PERIOD = 1000;

export const GUARANTEED_OOM_SCORE_ADJ = -997;
export const BEST_EFFORT_OOM_SCORE_ADJ = 1000;
export const KUBELET_OOM_SCORE_ADJ = -999;
/** Pods at or above this priority are critical (scheduling.SystemCriticalPriority). */
const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** milliCPUToShares: requests → cpu.shares, at least 2. */
export function milliCPUToShares(milliCPU: number): number {
  if (milliCPU === 0) return MIN_SHARES;
  const shares = Math.floor((milliCPU * SHARES_PER_CPU) / MILLI_CPU_TO_CPU);
  return Math.min(MAX_SHARES, Math.max(MIN_SHARES, shares));
}

/** milliCPUToQuota: limits → cfs_quota_us for the period, at least 1 ms; 0 (no quota) without a limit. */
export function milliCPUToQuota(milliCPU: number, period: number): number {
  if (milliCPU === 0) return 0;
  return Math.max(MIN_QUOTA_PERIOD, Math.floor((milliCPU * period) / MILLI_CPU_TO_CPU));
}

function quantity(list: ResourceRequirements['requests'], name: string): Quantity | undefined {
  const raw = list?.[name] as string | number | undefined;
  return raw === undefined ? undefined : Quantity.from(raw);
}

/** calculateLinuxResources: shares from the request (the limit when no request), quota from the limit, memory limit. */
export function linuxResources(cpuRequest: Quantity | undefined, cpuLimit: Quantity | undefined, memoryLimit: Quantity | undefined): LinuxContainerResources {
  const r: LinuxContainerResources = {};
  const limitMilli = cpuLimit ? Number(cpuLimit.milliValue()) : 0;
  // An unset request defaults to the limit (the API server does this too; older pods may lack it).
  if (!cpuRequest && limitMilli > 0) r.cpu_shares = milliCPUToShares(limitMilli);
  else r.cpu_shares = milliCPUToShares(cpuRequest ? Number(cpuRequest.milliValue()) : 0);
  if (memoryLimit && !memoryLimit.isZero()) r.memory_limit_in_bytes = Number(memoryLimit.value());
  if (limitMilli > 0) {
    r.cpu_quota = milliCPUToQuota(limitMilli, QUOTA_PERIOD);
    r.cpu_period = QUOTA_PERIOD;
  }
  return r;
}

/** kubelettypes.IsCriticalPod for API pods (kite has no static pods): system-critical priority or above. */
export function isCriticalPod(pod: Pod): boolean {
  return (pod.spec?.priority ?? 0) >= SYSTEM_CRITICAL_PRIORITY;
}

/** qos.GetContainerOOMScoreAdjust. memoryCapacity: the machine's memory in bytes. */
export function containerOOMScoreAdjust(pod: Pod, container: Container, memoryCapacity: number): number {
  if (isCriticalPod(pod)) return GUARANTEED_OOM_SCORE_ADJ;
  switch (qosClass(pod)) {
    case 'Guaranteed':
      return GUARANTEED_OOM_SCORE_ADJ;
    case 'BestEffort':
      return BEST_EFFORT_OOM_SCORE_ADJ;
  }
  const request = quantity(container.resources?.requests, 'memory');
  const memoryRequest = request ? Number(request.value()) : 0;
  // Burstable: the more of the machine the container asked for, the less likely it is killed.
  const adj = memoryCapacity > 0 ? 1000 - Math.trunc((1000 * memoryRequest) / memoryCapacity) : BEST_EFFORT_OOM_SCORE_ADJ;
  if (adj < 1000 + GUARANTEED_OOM_SCORE_ADJ) return 1000 + GUARANTEED_OOM_SCORE_ADJ;
  if (adj === BEST_EFFORT_OOM_SCORE_ADJ) return adj - 1;
  return adj;
}

/** generateLinuxContainerResources for one container. */
export function containerResources(pod: Pod, container: Container, memoryCapacity: number): LinuxContainerResources {
  const res = container.resources;
  const r = linuxResources(quantity(res?.requests, 'cpu'), quantity(res?.limits, 'cpu'), quantity(res?.limits, 'memory'));
  r.oom_score_adj = containerOOMScoreAdjust(pod, container, memoryCapacity);
  return r;
}

/**
 * The pod's effective requests or limits for one resource (resourcehelper.PodRequests/PodLimits
 * without overhead): the larger of the sum over regular containers (plus restartable init
 * containers, which keep running) and the largest init container. Undefined when no container names it.
 */
export function podResource(pod: Pod, which: 'requests' | 'limits', name: string): Quantity | undefined {
  let sum: Quantity | undefined;
  let sidecars: Quantity | undefined;
  let initMax: Quantity | undefined;
  const plus = (a: Quantity | undefined, b: Quantity): Quantity => (a ? a.add(b) : b);
  for (const c of pod.spec?.containers ?? []) {
    const q = quantity(c.resources?.[which], name);
    if (q) sum = plus(sum, q);
  }
  for (const c of pod.spec?.initContainers ?? []) {
    const q = quantity(c.resources?.[which], name);
    if (!q) continue;
    if (c.restartPolicy === 'Always') {
      sidecars = plus(sidecars, q);
      sum = plus(sum, q);
    } else {
      // A regular init container runs beside the sidecars started before it.
      const withSidecars = sidecars ? q.add(sidecars) : q;
      if (!initMax || withSidecars.cmp(initMax) > 0) initMax = withSidecars;
    }
  }
  if (!initMax) return sum;
  if (!sum) return initMax;
  return initMax.cmp(sum) > 0 ? initMax : sum;
}

/** The memory limit a pod's cgroup would get: only when every container declares one (cm.ResourceConfigForPod). */
export function podMemoryLimit(pod: Pod): Quantity | undefined {
  const all = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  if (all.length === 0 || !all.every((c) => quantity(c.resources?.limits, 'memory'))) return undefined;
  return podResource(pod, 'limits', 'memory');
}

/** calculateSandboxResources: the pod's summed requests and limits, for the sandbox's linux.resources. */
export function sandboxResources(pod: Pod): LinuxContainerResources {
  return linuxResources(podResource(pod, 'requests', 'cpu'), podResource(pod, 'limits', 'cpu'), podResource(pod, 'limits', 'memory'));
}

/** The sandbox's overhead (RuntimeClass pod overhead), when the pod carries one. */
export function sandboxOverhead(pod: Pod): LinuxContainerResources | undefined {
  const overhead = pod.spec?.overhead;
  if (!overhead || Object.keys(overhead).length === 0) return undefined;
  const cpu = quantity(overhead, 'cpu');
  return linuxResources(cpu, cpu, quantity(overhead, 'memory'));
}
