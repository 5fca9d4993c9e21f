// The reasons kubelet components give their events (recorded through client/record's
// EventRecorder, source "kubelet" on this node), spelled as upstream's pkg/kubelet/events.

// Container events.
export const CREATED_CONTAINER = 'Created';
export const STARTED_CONTAINER = 'Started';
export const FAILED_TO_CREATE_CONTAINER = 'Failed';
export const FAILED_TO_START_CONTAINER = 'Failed';
export const KILLING_CONTAINER = 'Killing';
export const PREEMPT_CONTAINER = 'Preempting';
export const BACK_OFF_START_CONTAINER = 'BackOff';
export const EXCEEDED_GRACE_PERIOD = 'ExceededGracePeriod';

// Pod events.
export const FAILED_TO_KILL_POD = 'FailedKillPod';
export const FAILED_TO_CREATE_POD_CONTAINER = 'FailedCreatePodContainer';
export const NETWORK_NOT_READY = 'NetworkNotReady';

// Image events.
export const PULLING_IMAGE = 'Pulling';
export const PULLED_IMAGE = 'Pulled';
export const FAILED_TO_PULL_IMAGE = 'Failed';
export const FAILED_TO_INSPECT_IMAGE = 'InspectFailed';
export const ERR_IMAGE_NEVER_PULL_POLICY = 'ErrImageNeverPull';
export const BACK_OFF_PULL_IMAGE = 'BackOff';

// Kubelet and node events.
export const NODE_READY = 'NodeReady';
export const NODE_NOT_READY = 'NodeNotReady';
export const NODE_SCHEDULABLE = 'NodeSchedulable';
export const NODE_NOT_SCHEDULABLE = 'NodeNotSchedulable';
export const STARTING_KUBELET = 'Starting';
export const KUBELET_SETUP_FAILED = 'KubeletSetupFailed';
export const FAILED_ATTACH_VOLUME = 'FailedAttachVolume';
export const FAILED_MOUNT_VOLUME = 'FailedMount';
export const VOLUME_RESIZE_FAILED = 'VolumeResizeFailed';
export const FILE_SYSTEM_RESIZE_FAILED = 'FileSystemResizeFailed';
export const SUCCESSFUL_MOUNT_VOLUME = 'SuccessfulMountVolume';
export const HOST_PORT_CONFLICT = 'HostPortConflict';
export const NODE_SELECTOR_MISMATCH = 'NodeSelectorMismatching';
export const INSUFFICIENT_FREE_CPU = 'InsufficientFreeCPU';
export const INSUFFICIENT_FREE_MEMORY = 'InsufficientFreeMemory';
export const NODE_RECTIFICATION_FAILED = 'NodeRectificationFailed';
export const UNSUPPORTED_MOUNT_OPTION = 'UnsupportedMountOption';
export const SANDBOX_CHANGED = 'SandboxChanged';
export const FAILED_CREATE_POD_SANDBOX = 'FailedCreatePodSandBox';
export const FAILED_STATUS_POD_SANDBOX = 'FailedPodSandBoxStatus';
export const FAILED_MOUNT_ON_FILESYSTEM_MISMATCH = 'FailedMountOnFilesystemMismatch';
export const FAILED_PREPARE_DYNAMIC_RESOURCES = 'FailedPrepareDynamicResources';
export const POSSIBLE_MEMORY_BACKED_VOLUMES_ON_DISK = 'PossibleMemoryBackedVolumesOnDisk';

// Probe and hook events.
export const CONTAINER_UNHEALTHY = 'Unhealthy';
export const CONTAINER_PROBE_WARNING = 'ProbeWarning';
export const FAILED_SYNC = 'FailedSync';
export const FAILED_POST_START_HOOK = 'FailedPostStartHook';
export const FAILED_PRE_STOP_HOOK = 'FailedPreStopHook';

// Garbage collection and node shutdown events (on the Node).
export const INVALID_DISK_CAPACITY = 'InvalidDiskCapacity';
export const FREE_DISK_SPACE_FAILED = 'FreeDiskSpaceFailed';
export const IMAGE_GC_FAILED = 'ImageGCFailed';
export const CONTAINER_GC_FAILED = 'ContainerGCFailed';
export const NODE_SHUTDOWN = 'Shutdown';
