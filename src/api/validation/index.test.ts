import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../field.js';
import { applyDefaults } from '../defaults/index.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

type Obj = Record<string, any>;

const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function defaulted(group: string, kind: string, obj: Obj): Obj {
  applyDefaults(group, kind, obj);
  return obj;
}

const messages = (errs: ReturnType<typeof validateCreate>) => errs.map(fieldErrorMessage);

function pod(mutate: (p: Obj) => void = () => {}): Obj {
  const p: Obj = {
    metadata: { name: 'web', namespace: 'default' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
  };
  mutate(p);
  return defaulted('', 'Pod', p);
}

test('a defaulted minimal object of every kind is valid', () => {
  const cases: [string, string, Obj][] = [
    ['', 'Pod', pod()],
    ['', 'Namespace', { metadata: { name: 'team-a' } }],
    ['', 'Node', { metadata: { name: 'node-1' }, status: { capacity: { cpu: '2', memory: '4Gi', pods: '110' } } }],
    ['', 'ConfigMap', { metadata: { name: 'cm', namespace: 'default' }, data: { 'a.txt': 'x' } }],
    ['', 'Secret', { metadata: { name: 's', namespace: 'default' }, data: { k: 'dg==' } }],
    ['', 'Service', { metadata: { name: 'svc', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } }],
    ['', 'ServiceAccount', { metadata: { name: 'default', namespace: 'default' } }],
    ['', 'Endpoints', { metadata: { name: 'svc', namespace: 'default' }, subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 80 }] }] }],
    ['', 'Event', { metadata: { name: 'web.1', namespace: 'default' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' }, reason: 'Started' }],
    ['coordination.k8s.io', 'Lease', { metadata: { name: 'node-1', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'node-1', leaseDurationSeconds: 40 } }],
    ['discovery.k8s.io', 'EndpointSlice', { metadata: { name: 'svc-abc', namespace: 'default' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.5'] }], ports: [{ port: 80 }] }],
    ['scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'high' }, value: 1000 }],
    ['scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'system-node-critical' }, value: 2000001000 }],
    [
      'events.k8s.io',
      'Event',
      {
        metadata: { name: 'e1', namespace: 'default' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
        reason: 'Scheduled',
        action: 'Binding',
        type: 'Normal',
        reportingController: 'default-scheduler',
        reportingInstance: 'default-scheduler-1',
      },
    ],
  ];
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } };
  cases.push(['apps', 'Deployment', { metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template } }]);
  cases.push(['apps', 'ReplicaSet', { metadata: { name: 'web-1', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: structuredClone(template) } }]);
  for (const [group, kind, obj] of cases) {
    assert.deepEqual(messages(validateCreate(group, kind, defaulted(group, kind, obj))), [], `${kind}.${group}`);
  }
});

test('object metadata', () => {
  const cases: [Obj, string[]][] = [
    [{ name: 'Web_1', namespace: 'default' }, [`metadata.name: Invalid value: "Web_1": ${subdomainMsg}`]],
    [{ namespace: 'default' }, ['metadata.name: Required value: name or generateName is required']],
    [{ name: 'web' }, ['metadata.namespace: Required value']],
    [{ name: 'web', namespace: 'a.b' }, ['metadata.namespace: Invalid value: "a.b": must not contain dots']],
    [
      { name: 'web', namespace: 'default', labels: { 'a/b/c': 'x', ok: 'bad value' } },
      [
        `metadata.labels: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
        `metadata.labels: Invalid value: "bad value": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
      ],
    ],
    [{ name: 'web', namespace: 'default', annotations: { big: 'x'.repeat(256 * 1024) } }, ['metadata.annotations: Too long: may not be more than 262144 bytes']],
    [{ name: 'web', namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'x' }] }, ['metadata.ownerReferences.uid: Invalid value: "": uid must not be empty']],
  ];
  for (const [metadata, want] of cases) {
    assert.deepEqual(messages(validateCreate('', 'ConfigMap', { metadata })), want, JSON.stringify(metadata).slice(0, 80));
  }
  assert.deepEqual(messages(validateCreate('', 'Namespace', { metadata: { name: 'x', namespace: 'y' } })), ['metadata.namespace: Forbidden: not allowed on this type']);
  assert.deepEqual(messages(validateCreate('', 'ConfigMap', { metadata: { name: 'x-abcde', generateName: 'x-', namespace: 'd' } })), []);
});

test('pod spec errors', () => {
  const cases: [string, (p: Obj) => void, string[]][] = [
    ['no containers', (p) => (p.spec.containers = []), ['spec.containers: Required value']],
    ['no image', (p) => delete p.spec.containers[0].image, ['spec.containers[0].image: Required value']],
    ['bad name', (p) => (p.spec.containers[0].name = 'App'), [`spec.containers[0].name: Invalid value: "App": ${labelMsg}`]],
    [
      'duplicate names',
      (p) => p.spec.containers.push({ name: 'app', image: 'x' }),
      ['spec.containers[1].name: Duplicate value: "app"'],
    ],
    ['bad restartPolicy', (p) => (p.spec.restartPolicy = 'Sometimes'), ['spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"']],
    ['bad port', (p) => (p.spec.containers[0].ports = [{ containerPort: 70000 }]), ['spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive']],
    ['missing volume', (p) => (p.spec.containers[0].volumeMounts = [{ name: 'data', mountPath: '/d' }]), ['spec.containers[0].volumeMounts[0].name: Not found: "data"']],
    [
      'request above limit',
      (p) => (p.spec.containers[0].resources = { requests: { cpu: '2' }, limits: { cpu: '1' } }),
      ['spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1'],
    ],
    [
      'two probe handlers',
      (p) => (p.spec.containers[0].livenessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 80 } }),
      ['spec.containers[0].livenessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type'],
    ],
    ['liveness success threshold', (p) => (p.spec.containers[0].livenessProbe = { exec: { command: ['true'] }, successThreshold: 2 }), ['spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1']],
    ['probe without handler', (p) => (p.spec.containers[0].readinessProbe = {}), ['spec.containers[0].readinessProbe: Required value: must specify a handler type']],
    [
      'init container probe',
      (p) => (p.spec.initContainers = [{ name: 'init', image: 'busybox', readinessProbe: { exec: { command: ['true'] } } }]),
      ['spec.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always'],
    ],
    [
      'toleration without key',
      (p) => (p.spec.tolerations = [{ operator: 'Equal', value: 'x' }]),
      ['spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"'],
    ],
    ['bad env name', (p) => (p.spec.containers[0].env = [{ name: 'A=B' }]), [`spec.containers[0].env[0].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`]],
    ['dns policy', (p) => (p.spec.dnsPolicy = 'Bogus'), ['spec.dnsPolicy: Unsupported value: "Bogus": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"']],
    ['ephemeral on create', (p) => (p.spec.ephemeralContainers = [{ name: 'dbg', image: 'busybox', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }]), ['spec.ephemeralContainers: Forbidden: cannot be set on create']],
    ['scheduling gate dup', (p) => (p.spec.schedulingGates = [{ name: 'a' }, { name: 'a' }]), ['spec.schedulingGates[1]: Duplicate value: "a"']],
    [
      'extended resource fraction (requests defaulted from limits)',
      (p) => (p.spec.containers[0].resources = { limits: { 'example.com/gpu': '500m' } }),
      ['spec.containers[0].resources.limits[example.com/gpu]: Invalid value: 500m: must be an integer', 'spec.containers[0].resources.requests[example.com/gpu]: Invalid value: 500m: must be an integer'],
    ],
    [
      'extended resource request without limit',
      (p) => (p.spec.containers[0].resources = { requests: { 'example.com/gpu': '1' } }),
      ['spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources'],
    ],
  ];
  for (const [name, mutate, want] of cases) assert.deepEqual(messages(validateCreate('', 'Pod', pod(mutate))), want, name);
});

test('pod updates', () => {
  const old = pod();
  const image = structuredClone(old);
  image.spec.containers[0].image = 'nginx:1.26';
  assert.deepEqual(messages(validateUpdate('', 'Pod', image, old)), []);
  const tol = structuredClone(old);
  tol.spec.tolerations = [{ key: 'k', operator: 'Exists' }];
  assert.deepEqual(messages(validateUpdate('', 'Pod', tol, old)), []);
  const changed = structuredClone(old);
  changed.spec.restartPolicy = 'Never';
  const errs = messages(validateUpdate('', 'Pod', changed, old));
  assert.equal(errs.length, 1);
  assert.match(errs[0]!, /^spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`,/);
  assert.match(errs[0]!, /- \trestartPolicy: "Always"\n\+ \trestartPolicy: "Never"/);
  const added = pod((p) => p.spec.containers.push({ name: 'b', image: 'x' }));
  assert.deepEqual(messages(validateUpdate('', 'Pod', added, old)), ['spec.containers: Forbidden: pod updates may not add or remove containers']);
  const renamed = structuredClone(old);
  renamed.metadata.name = 'other';
  assert.ok(messages(validateUpdate('', 'Pod', renamed, old)).includes('metadata.name: Invalid value: "other": field is immutable'));
});

test('pod status updates', () => {
  const old = pod((p) => (p.spec.restartPolicy = 'Never'));
  old.status = { containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 0 } } }] };
  const next = structuredClone(old);
  next.status.containerStatuses[0].state = { running: {} };
  next.status.podIPs = [{ ip: '10.0.0.300' }];
  assert.deepEqual(messages(validateStatusUpdate('', 'Pod', next, old)), [
    'status.containerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state',
    'status.podIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  ]);
});

test('workloads', () => {
  const d = defaulted('apps', 'Deployment', {
    metadata: { name: 'web', namespace: 'default' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'other' } }, spec: { containers: [{ name: 'a', image: 'x' }] } } },
  });
  assert.deepEqual(messages(validateCreate('apps', 'Deployment', d)), [
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`',
  ]);
  d.spec.template.metadata.labels.app = 'web';
  const moved = structuredClone(d);
  moved.spec.selector = { matchLabels: { app: 'web2' } };
  moved.spec.template.metadata.labels.app = 'web2';
  assert.deepEqual(messages(validateUpdate('apps', 'Deployment', moved, d)), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ]);
  const rs = defaulted('apps', 'ReplicaSet', { metadata: { name: 'web', namespace: 'default' }, spec: { replicas: -1, template: { spec: { containers: [{ name: 'a', image: 'x' }] } } } });
  assert.deepEqual(messages(validateCreate('apps', 'ReplicaSet', rs)), [
    'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    'spec.selector: Required value',
    'spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`',
  ]);
  const status = structuredClone(d);
  status.status = { replicas: 1, readyReplicas: 2 };
  assert.deepEqual(messages(validateStatusUpdate('apps', 'Deployment', status, d)), ['status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas']);
});

test('config objects and immutability', () => {
  const cm = { metadata: { name: 'cm', namespace: 'd' }, data: { 'bad key': 'x' } };
  assert.deepEqual(messages(validateCreate('', 'ConfigMap', cm)), [
    `data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
  ]);
  assert.deepEqual(messages(validateCreate('', 'ConfigMap', { metadata: { name: 'cm', namespace: 'd' }, data: { a: 'x'.repeat(1024 * 1024 + 1) } })), ['[]: Too long: may not be more than 1048576 bytes']);
  const frozen = { metadata: { name: 's', namespace: 'd' }, type: 'Opaque', immutable: true, data: { a: 'eA==' } };
  const changed = { ...frozen, data: { a: 'eQ==' } };
  assert.deepEqual(messages(validateUpdate('', 'Secret', changed, frozen)), ['data: Forbidden: field is immutable when `immutable` is set']);
  const retyped = { ...frozen, immutable: false, type: 'kubernetes.io/tls', data: frozen.data };
  assert.deepEqual(messages(validateUpdate('', 'Secret', retyped, { ...frozen, immutable: false })), [
    'type: Invalid value: "kubernetes.io/tls": field is immutable',
    'data[tls.crt]: Required value',
    'data[tls.key]: Required value',
  ]);
});

test('services, priority classes, leases, slices, nodes, namespaces', () => {
  const svc = defaulted('', 'Service', { metadata: { name: '1svc', namespace: 'd' }, spec: { type: 'Bogus', ports: [{ port: 80 }, { port: 80, name: 'b' }] } });
  assert.deepEqual(messages(validateCreate('', 'Service', svc)), [
    `metadata.name: Invalid value: "1svc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    'spec.ports[0].name: Required value',
    'spec.type: Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    'spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
  ]);
  const withIP = defaulted('', 'Service', { metadata: { name: 's', namespace: 'd' }, spec: { clusterIP: '10.0.0.10', ports: [{ port: 80 }] } });
  const moved = structuredClone(withIP);
  moved.spec.clusterIP = '10.0.0.11';
  assert.deepEqual(messages(validateUpdate('', 'Service', moved, withIP)), ['spec.clusterIPs[0]: Invalid value: []string{"10.0.0.11"}: may not change once set']);

  assert.deepEqual(messages(validateCreate('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'huge' }, value: 2000000000 })), [
    'value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
  ]);
  assert.deepEqual(messages(validateCreate('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'system-x' }, value: 1 })), [
    "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-x is not a known system priority class",
  ]);
  assert.deepEqual(messages(validateUpdate('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'p' }, value: 2 }, { metadata: { name: 'p' }, value: 1 })), [
    'value: Forbidden: may not be changed in an update.',
  ]);
  assert.deepEqual(messages(validateCreate('coordination.k8s.io', 'Lease', { metadata: { name: 'l', namespace: 'd' }, spec: { leaseDurationSeconds: 0 } })), [
    'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
  ]);
  assert.deepEqual(messages(validateCreate('discovery.k8s.io', 'EndpointSlice', { metadata: { name: 'e', namespace: 'd' }, addressType: 'IPv4', endpoints: [{ addresses: [] }] })), [
    'endpoints[0].addresses: Required value: must contain at least 1 address',
  ]);
  assert.deepEqual(messages(validateCreate('', 'Node', { metadata: { name: 'n' }, spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } })), [
    'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
  ]);
  const node = { metadata: { name: 'n' }, spec: { podCIDRs: ['10.0.0.0/24'] } };
  assert.deepEqual(messages(validateUpdate('', 'Node', { ...node, spec: { podCIDRs: ['10.0.1.0/24'] } }, node)), [
    'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
    '[]: Forbidden: node updates may only change labels, taints, or capacity (or configSource, if the DynamicKubeletConfig feature gate is enabled)',
  ]);
  const ns = { metadata: { name: 'n' }, status: { phase: 'Terminating' } };
  assert.deepEqual(messages(validateStatusUpdate('', 'Namespace', ns, { metadata: { name: 'n' } })), [
    `status.Phase: Invalid value: "Terminating": may only be 'Active' if \`deletionTimestamp\` is empty`,
  ]);
  assert.throws(() => validateCreate('', 'Unknown', {}), /no validation for Unknown/);
});

test('events: legacy checks for core/v1, strict for events.k8s.io/v1', () => {
  const core = { metadata: { name: 'e', namespace: 'default' }, involvedObject: { namespace: 'other' } };
  assert.deepEqual(messages(validateCreate('', 'Event', core)), ['involvedObject.namespace: Invalid value: "other": does not match event.namespace']);
  const v1 = { metadata: { name: 'e', namespace: 'default' }, regarding: { namespace: 'default' }, type: 'Odd' };
  assert.deepEqual(messages(validateCreate('events.k8s.io', 'Event', v1)), ['eventTime: Required value', 'type: Invalid value: "": has invalid value: Odd']);
});

test('nulls in a body fail as the zero values upstream decodes them into', () => {
  const cases: [string, string, Obj, string[]][] = [
    ['', 'Pod', pod((p) => (p.spec.containers = [null])), ['spec.containers[0].name: Required value', 'spec.containers[0].image: Required value']],
    [
      '',
      'Pod',
      pod((p) => (p.spec.tolerations = [null])),
      ['spec.tolerations[0].operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all values and all keys"'],
    ],
    ['', 'Pod', pod((p) => (p.spec.containers[0].resources = { requests: { cpu: null }, limits: { memory: null } })), []],
    ['', 'Pod', pod((p) => (p.spec = null)), ['spec.containers: Required value']],
    ['', 'Pod', pod((p) => (p.metadata.ownerReferences = [null])), [
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": kind must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": name must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": uid must not be empty',
    ]],
    [
      'apps',
      'Deployment',
      defaulted('apps', 'Deployment', {
        metadata: { name: 'd', namespace: 'default' },
        spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [null] } } },
      }),
      ['spec.template.spec.containers[0].name: Required value', 'spec.template.spec.containers[0].image: Required value'],
    ],
  ];
  for (const [group, kind, obj, want] of cases) assert.deepEqual(messages(validateCreate(group, kind, obj)), want, JSON.stringify(obj));
});
