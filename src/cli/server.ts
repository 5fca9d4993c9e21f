// `kite server`: the API server with the controllers and the scheduler beside it.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { ApiServer, allComponents, type ApiServerOptions, type Component } from '../apiserver/server.js';
import { newLogger, type Logger } from '../util/log.js';
import { checkFlags, parseArgs, type ParsedArgs } from '../util/args.js';
import { parseDuration } from '../api/duration.js';
import { controllerDescriptors, validateControllers } from '../controllers/descriptors.js';
import { defaultRequestLimits, type RequestLimits } from '../apiserver/http/filters.js';
import { enabledPluginNames, type AdmissionPluginFlags } from '../apiserver/admission/plugins.js';
import { parsePortRange } from '../apiserver/registry/service/portallocator.js';
import { cidrErrors } from '../api/validation/servicecidr.js';
import { parsePrefix } from '../api/netip.js';
import { otlpEndpoint } from '../apiserver/timeline/otel/exporter.js';

export const serverUsage = `  server   Run the API server.
           --data-dir DIR              state, certificates, admin.kubeconfig and join-token (required)
           --listen HOST:PORT          default 127.0.0.1:6443
           --advertise-address IP      the address pods reach this server at: it listens there too (same port, retried
                                       every second until the address exists) and the kubernetes Service's endpoints name it
           --store sqlite|etcd://HOST:PORT[,HOST:PORT...]   default sqlite
           --pki-dir DIR               the cluster CA and the server's certificates (default DATA/pki); several
                                       servers on one etcd share it: start one, then the others with its directory
           --token-auth-file FILE      static bearer tokens (token,user,uid,"group1,group2")
           --components LIST           what runs beside the API server: controllers,scheduler (default both; "apiserver" alone for none)
           --controllers LIST          controllers to run: * (all enabled by default), NAME enables, -NAME disables (default *)
           --terminated-pod-gc-threshold N  terminated pods kept before the oldest are deleted (0: none deleted), default 12500
           --max-endpoints-per-slice N  endpoints per EndpointSlice the EndpointSlice controller writes (1-1000), default 100
           --horizontal-pod-autoscaler-sync-period DURATION  how often each HorizontalPodAutoscaler is reconciled, default 15s
           --resource-quota-sync-period DURATION  how often every ResourceQuota's usage is recalculated in full, default 5m0s
           --node-monitor-period DURATION  how often the node lifecycle controller checks node health, default 5s
           --node-monitor-grace-period DURATION  silence before a node is marked Unknown (NotReady), default 50s
           --node-startup-grace-period DURATION  how long a new node may go without posting status, default 1m0s
           --node-eviction-rate RATE   nodes per second tainted for eviction in a healthy zone, default 0.1
           --secondary-node-eviction-rate RATE  nodes per second in a partially disrupted large zone, default 0.01
           --large-cluster-size-threshold N  nodes above which a zone is large (else its partial disruption stops tainting), default 50
           --unhealthy-zone-threshold FRACTION  share of not-Ready nodes (at least 3) that disrupts a zone, default 0.55
           --metric-resolution DURATION  how often kubelets are scraped for metrics.k8s.io (kubectl top), default 15s
           --request-timeout DURATION  longest a request other than a watch, log or exec may take, default 1m0s
           --max-requests-inflight N   concurrent non-mutating requests before 429 (0: no limit), default 400
           --max-mutating-requests-inflight N  concurrent mutating requests before 429 (0: no limit), default 200
           --enable-admission-plugins LIST   admission plugins to run besides the default ones (upstream's default-on
                                       set that kite has: NamespaceLifecycle, LimitRanger, ServiceAccount,
                                       NodeRestriction, TaintNodesByCondition, PodSecurity, Priority,
                                       DefaultTolerationSeconds, RuntimeClass, CertificateApproval,
                                       CertificateSigning, CertificateSubjectRestriction, DefaultIngressClass,
                                       MutatingAdmissionWebhook, ValidatingAdmissionPolicy,
                                       ValidatingAdmissionWebhook, ResourceQuota)
           --disable-admission-plugins LIST  default admission plugins to turn off
           --service-cluster-ip-range CIDR[,CIDR]  the default ServiceCIDR, made at first start (default 10.96.0.0/12)
           --service-node-port-range MIN-MAX  ports for NodePort services (default 30000-32767)
           --service-account-issuer URL  the iss of service account tokens and the API audience
                                       (default https://kubernetes.default.svc.cluster.local)
           --service-account-max-token-expiration DURATION  longest a TokenRequest may ask for (1h to 2^32 s; default no cap)
           --audit-policy-file FILE    an audit.k8s.io/v1 Policy: which requests are logged, at which level
           --audit-log-path PATH       where audit events go, one JSON Event a line ("-": stdout)
           --audit-log-maxsize MB      size at which the audit log rotates (default 100)
           --audit-log-maxbackup N     rotated audit logs kept (default 0: all)
           --audit-log-maxage DAYS     days a rotated audit log is kept (default 0: no limit)
           --audit-log-format json     the format of audit events (json only)
           --encryption-provider-config FILE  an EncryptionConfiguration (apiserver.config.k8s.io/v1): the resources stored
                                       encrypted (aescbc, aesgcm, secretbox; the first provider writes, all read)
           --pod-timeline true|false   keep each pod's timeline (timeline.kite.dev podtimelines; default true); false:
                                       components' steps are accepted and dropped
           --pod-timeline-retention DURATION  how long a timeline outlives its pod, default 24h0m0s
           --pod-timeline-max-pods N   timelines kept at most (deleted pods' go first), default 20000
           --otlp-endpoint URL         export the pod timelines as OpenTelemetry traces (one per pod) to this OTLP/HTTP
                                       traces endpoint, e.g. http://127.0.0.1:4318/v1/traces (default: no export)
`;

const nodeLifecycleFlags = ['node-monitor-period', 'node-monitor-grace-period', 'node-startup-grace-period', 'node-eviction-rate', 'secondary-node-eviction-rate', 'large-cluster-size-threshold', 'unhealthy-zone-threshold'];

export const serverFlags = ['data-dir', 'pki-dir', 'listen', 'advertise-address', 'store', 'token-auth-file', 'components', 'controllers', 'terminated-pod-gc-threshold', 'max-endpoints-per-slice', 'horizontal-pod-autoscaler-sync-period', 'resource-quota-sync-period', ...nodeLifecycleFlags, 'metric-resolution', 'request-timeout', 'max-requests-inflight', 'max-mutating-requests-inflight', 'enable-admission-plugins', 'disable-admission-plugins', 'service-cluster-ip-range', 'service-node-port-range', 'service-account-issuer', 'service-account-max-token-expiration', 'encryption-provider-config', 'audit-policy-file', 'audit-log-path', 'audit-log-maxsize', 'audit-log-maxbackup', 'audit-log-maxage', 'audit-log-format', 'pod-timeline', 'pod-timeline-retention', 'pod-timeline-max-pods', 'otlp-endpoint'];

export function serverOptions(args: ParsedArgs, logger: Logger): ApiServerOptions {
  const dataDir = args.flags.get('data-dir');
  if (!dataDir) throw new Error('--data-dir is required');
  return {
    dataDir: resolve(dataDir),
    pkiDir: optionalPath(args.flags.get('pki-dir')),
    listen: args.flags.get('listen') ?? '127.0.0.1:6443',
    advertiseAddress: advertiseAddressFlag(args.flags.get('advertise-address')),
    storage: args.flags.get('store') ?? 'sqlite',
    tokenAuthFile: args.flags.get('token-auth-file'),
    components: parseComponents(args.flags.get('components')),
    controllers: parseControllers(args.flags.get('controllers')),
    terminatedPodGCThreshold: wholeNumber(args, 'terminated-pod-gc-threshold'),
    maxEndpointsPerSlice: maxEndpointsPerSlice(args),
    horizontalPodAutoscalerSyncPeriodMs: positiveDuration(args, 'horizontal-pod-autoscaler-sync-period'),
    resourceQuotaSyncPeriodMs: positiveDuration(args, 'resource-quota-sync-period'),
    nodeLifecycle: nodeLifecycleOptions(args),
    controllerIdentities: [...new Set(controllerDescriptors.map((d) => d.identity))],
    metricResolutionMs: positiveDuration(args, 'metric-resolution'),
    limits: requestLimits(args),
    admission: admissionPlugins(args),
    serviceClusterIPRange: serviceClusterIPRange(args.flags.get('service-cluster-ip-range')),
    serviceNodePortRange: optionalPortRange(args.flags.get('service-node-port-range')),
    serviceAccountIssuer: serviceAccountIssuer(args.flags.get('service-account-issuer')),
    serviceAccountMaxTokenExpirationSeconds: maxTokenExpiration(args),
    encryptionProviderConfig: optionalPath(args.flags.get('encryption-provider-config')),
    audit: auditOptions(args),
    podTimeline: podTimelineOptions(args),
    otlpEndpoint: optionalOtlpEndpoint(args.flags.get('otlp-endpoint')),
    logger,
  };
}

/** --pod-timeline, --pod-timeline-retention and --pod-timeline-max-pods. */
function podTimelineOptions(args: ParsedArgs): ApiServerOptions['podTimeline'] {
  const enabled = args.flags.get('pod-timeline');
  if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') throw new Error(`--pod-timeline must be true or false, got "${enabled}"`);
  const maxPods = wholeNumber(args, 'pod-timeline-max-pods');
  if (maxPods === 0) throw new Error('--pod-timeline-max-pods must be positive');
  return { enabled: enabled !== 'false', retentionMs: positiveDuration(args, 'pod-timeline-retention'), maxPods };
}

/** kube-apiserver's check: an issuer with a colon must be a URL. */
function serviceAccountIssuer(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  if (text === '') throw new Error('--service-account-issuer must not be empty');
  if (text.includes(':')) {
    try {
      new URL(text);
    } catch {
      throw new Error(`service-account-issuer "${text}" contained a ':' but was not a valid URL`);
    }
  }
  return text;
}

/** --service-account-max-token-expiration, in seconds, within kube-apiserver's bounds. */
function maxTokenExpiration(args: ParsedArgs): number | undefined {
  const ms = positiveDuration(args, 'service-account-max-token-expiration');
  if (ms === undefined) return undefined;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 3600 || seconds > 2 ** 32) throw new Error('the service-account-max-token-expiration must be between 1 hour and 2^32 seconds');
  return seconds;
}

const optionalPath = (p: string | undefined) => (p === undefined ? undefined : resolve(p));

const optionalOtlpEndpoint = (url: string | undefined) => (url === undefined ? undefined : otlpEndpoint(url));

const optionalPortRange = (text: string | undefined) => (text === undefined ? undefined : parsePortRange(text));

/** kube-apiserver's checks of --service-cluster-ip-range: one or two canonical CIDRs, one per family. */
export function serviceClusterIPRange(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const cidrs = text.split(',');
  cidrs.forEach((c, i) => {
    const why = cidrErrors(c)[0];
    if (why) throw new Error(`--service-cluster-ip-range: "${c}" ${why}`);
    // kube-apiserver's bound: at most 2^20 addresses.
    const bits = parsePrefix(c)!.addr.family === 'IPv4' ? 32 : 128;
    if (parsePrefix(c)!.bits < bits - 20) throw new Error(`specified --service-cluster-ip-range[${i}] is too large; for ${bits}-bit addresses, the mask must be >= ${bits - 20}`);
  });
  if (cidrs.length > 2 || (cidrs.length === 2 && parsePrefix(cidrs[0]!)!.addr.family === parsePrefix(cidrs[1]!)!.addr.family)) {
    throw new Error('--service-cluster-ip-range: at most two CIDRs, one of each IP family');
  }
  return text;
}

/** kube-apiserver's audit flags: the policy file and the log backend. */
export function auditOptions(args: ParsedArgs): ApiServerOptions['audit'] {
  const format = args.flags.get('audit-log-format') ?? 'json';
  if (format !== 'json') throw new Error(`--audit-log-format: unsupported format "${format}" (kite writes json only; legacy is not supported)`);
  const path = args.flags.get('audit-log-path');
  return {
    policyFile: optionalPath(args.flags.get('audit-policy-file')),
    log: path === undefined ? undefined : {
      path: path === '-' ? path : resolve(path),
      maxSizeMB: wholeNumber(args, 'audit-log-maxsize') ?? 0,
      maxBackups: wholeNumber(args, 'audit-log-maxbackup') ?? 0,
      maxAgeDays: wholeNumber(args, 'audit-log-maxage') ?? 0,
    },
  };
}

/** A flag that takes a whole number; undefined when it is not given. */
function wholeNumber(args: ParsedArgs, flag: string): number | undefined {
  const text = args.flags.get(flag);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`--${flag} must be a whole number, got "${text}"`);
  return Number(text);
}

/** kube-controller-manager's node lifecycle flags; only those given are set. */
function nodeLifecycleOptions(args: ParsedArgs): NonNullable<ApiServerOptions['nodeLifecycle']> {
  const unhealthyZoneThreshold = fraction(args, 'unhealthy-zone-threshold');
  if (unhealthyZoneThreshold !== undefined && unhealthyZoneThreshold > 1) throw new Error(`--unhealthy-zone-threshold must be between 0 and 1, got ${unhealthyZoneThreshold}`);
  const given = {
    nodeMonitorPeriodMs: positiveDuration(args, 'node-monitor-period'),
    nodeMonitorGracePeriodMs: positiveDuration(args, 'node-monitor-grace-period'),
    nodeStartupGracePeriodMs: positiveDuration(args, 'node-startup-grace-period'),
    nodeEvictionRate: fraction(args, 'node-eviction-rate'),
    secondaryNodeEvictionRate: fraction(args, 'secondary-node-eviction-rate'),
    largeClusterSizeThreshold: wholeNumber(args, 'large-cluster-size-threshold'),
    unhealthyZoneThreshold,
  };
  return Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
}

/** A flag that takes a non-negative decimal number ("0.1"); undefined when it is not given. */
function fraction(args: ParsedArgs, flag: string): number | undefined {
  const text = args.flags.get(flag);
  if (text === undefined) return undefined;
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(text)) throw new Error(`--${flag} must be a non-negative number, got "${text}"`);
  return Number(text);
}

/** kube-apiserver's check: an IP address, neither unspecified nor loopback (Endpoints refuse those). */
function advertiseAddressFlag(ip: string | undefined): string | undefined {
  if (ip === undefined) return undefined;
  if (!isIP(ip)) throw new Error(`--advertise-address must be an IP address, got "${ip}"`);
  if (ip === '0.0.0.0' || ip === '::' || ip.startsWith('127.') || ip === '::1') throw new Error(`--advertise-address may not be unspecified or loopback, got "${ip}"`);
  return ip;
}

/** kube-controller-manager's check: --max-endpoints-per-slice in [1, 1000]. */
function maxEndpointsPerSlice(args: ParsedArgs): number | undefined {
  const n = wholeNumber(args, 'max-endpoints-per-slice');
  if (n !== undefined && (n < 1 || n > 1000)) throw new Error(`--max-endpoints-per-slice must be between 1 and 1000, got ${n}`);
  return n;
}

function requestLimits(args: ParsedArgs): RequestLimits {
  const count = (flag: string, fallback: number) => wholeNumber(args, flag) ?? fallback;
  const timeout = args.flags.get('request-timeout');
  const requestTimeoutMs = timeout === undefined ? defaultRequestLimits.requestTimeoutMs : parseDuration(timeout);
  if (requestTimeoutMs <= 0) throw new Error(`--request-timeout must be positive, got "${timeout}"`);
  return {
    requestTimeoutMs,
    maxRequestsInflight: count('max-requests-inflight', defaultRequestLimits.maxRequestsInflight),
    maxMutatingRequestsInflight: count('max-mutating-requests-inflight', defaultRequestLimits.maxMutatingRequestsInflight),
  };
}

/** The admission flags, checked here so an unknown plugin is one line at start. */
function admissionPlugins(args: ParsedArgs): AdmissionPluginFlags {
  const list = (flag: string) => args.flags.get(flag)?.split(',').filter((p) => p !== '');
  const flags = { enable: list('enable-admission-plugins'), disable: list('disable-admission-plugins') };
  enabledPluginNames(flags);
  return flags;
}

/** A flag that takes a positive duration ("15s", "1m"); undefined when it is not given. */
function positiveDuration(args: ParsedArgs, flag: string): number | undefined {
  const text = args.flags.get(flag);
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms <= 0) throw new Error(`--${flag} must be positive, got "${text}"`);
  return ms;
}

export function parseComponents(text: string | undefined): Component[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').filter((c) => c !== '' && c !== 'apiserver');
  for (const c of list) if (!allComponents.includes(c as Component)) throw new Error(`unknown component "${c}": expected ${allComponents.join(', ')}`);
  return list as Component[];
}

/** kube-controller-manager's --controllers, checked here so a typo is one line at start, not a failing thread. */
export function parseControllers(text: string | undefined): string[] | undefined {
  return text === undefined ? undefined : validateControllers(text.split(',').filter((c) => c !== ''));
}

export async function serverCommand(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  checkFlags(args, serverFlags);
  const logger = newLogger('apiserver');
  const server = new ApiServer(serverOptions(args, logger));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await server.start();
  process.stdout.write(`kite API server listening on ${server.url}\nkubeconfig: ${server.kubeconfigPath}\n`);
}
