// DaemonSet, StatefulSet, ControllerRevision, ReplicationController and PodTemplate served as
// upstream 1.33 to the real kubectl (create/apply, `get` tables, `explain`, refusals with upstream's
// messages, scale), and the ReplicationController controller running pods on `kite sim`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, kubectl, kubectlOk, simCluster } from './harness.js';

const podSpec = `      terminationGracePeriodSeconds: 1
      containers:
      - name: main
        image: busybox:1.35
        command: ['sleep', '3600']`;

// A node selector no node has, so the numbers stay 0 whether or not a DaemonSet controller runs.
const daemonSet = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeSelector:
        kite.test/none: "true"
${podSpec}
`;

const statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 0
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
${podSpec}
`;

const replicationController = `apiVersion: v1
kind: ReplicationController
metadata:
  name: web
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: web
    spec:
${podSpec}
`;

const podTemplate = `apiVersion: v1
kind: PodTemplate
metadata:
  name: tmpl
template:
  metadata:
    labels:
      app: tmpl
      tier: fe
  spec:
${podSpec.replace(/^ {2}/gm, '')}
`;

const header = (out: string) => out.split('\n')[0]!.trim().split(/\s{2,}/);
const cells = (out: string) => out.trim().split(/\s{2,}/);

describe('apps workloads API and the ReplicationController controller (kite server + kite sim)', () => {
  const cluster = simCluster(2);
  const k = (args: string[], input?: string) => kubectlOk(cluster.server, args, input);
  const fails = (args: string[], input?: string) => {
    const r = kubectl(cluster.server, args, input);
    assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should fail`);
    return r.stderr.trim();
  };

  it('creates each kind and prints it as upstream does', () => {
    assert.equal(k(['apply', '-f', '-'], daemonSet).trim(), 'daemonset.apps/agent created');
    assert.equal(k(['create', '-f', '-'], statefulSet).trim(), 'statefulset.apps/db created');
    assert.equal(k(['create', '-f', '-'], podTemplate).trim(), 'podtemplate/tmpl created');

    const ds = k(['get', 'ds', 'agent', '-o', 'wide']);
    assert.deepEqual(header(ds), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    const dsRow = cells(ds.split('\n')[1]!);
    assert.deepEqual([...dsRow.slice(0, 7), ...dsRow.slice(8)], ['agent', '0', '0', '0', '0', '0', 'kite.test/none=true', 'main', 'busybox:1.35', 'app=agent']);
    // Defaults and the template generation as upstream's strategy keeps them.
    const dsObj = JSON.parse(k(['get', 'ds', 'agent', '-o', 'json'])) as { metadata: { uid: string; annotations: Record<string, string>; generation: number }; spec: Record<string, unknown> };
    assert.equal(dsObj.metadata.annotations['deprecated.daemonset.template.generation'], '1');
    assert.deepEqual(dsObj.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(dsObj.spec.revisionHistoryLimit, 10);
    k(['set', 'image', 'ds/agent', 'main=busybox:1.36']);
    const rolled = JSON.parse(k(['get', 'ds', 'agent', '-o', 'json'])) as typeof dsObj;
    assert.equal(rolled.metadata.annotations['deprecated.daemonset.template.generation'], '2');
    assert.equal(rolled.metadata.generation, 2);

    const sts = k(['get', 'statefulsets']);
    assert.deepEqual(header(sts), ['NAME', 'READY', 'AGE']);
    assert.deepEqual(cells(sts.split('\n')[1]!).slice(0, 2), ['db', '0/0']);
    const stsSpec = (JSON.parse(k(['get', 'sts', 'db', '-o', 'json'])) as { spec: Record<string, unknown> }).spec;
    assert.equal(stsSpec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(stsSpec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(stsSpec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });

    const revision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'agent-1', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: dsObj.metadata.uid, controller: true }] },
      data: { spec: { template: { metadata: { labels: { app: 'agent' } } } } },
      revision: 1,
    };
    assert.equal(k(['create', '-f', '-'], JSON.stringify(revision)).trim(), 'controllerrevision.apps/agent-1 created');
    const cr = k(['get', 'controllerrevisions', 'agent-1']);
    assert.deepEqual(header(cr), ['NAME', 'CONTROLLER', 'REVISION', 'AGE']);
    assert.deepEqual(cells(cr.split('\n')[1]!).slice(0, 3), ['agent-1', 'daemonset.apps/agent', '1']);

    const pt = k(['get', 'podtemplates']);
    assert.deepEqual(header(pt), ['NAME', 'CONTAINERS', 'IMAGES', 'POD LABELS']);
    assert.deepEqual(cells(pt.split('\n')[1]!), ['tmpl', 'main', 'busybox:1.35', 'app=tmpl,tier=fe']);
  });

  it('explains the kinds from the OpenAPI documents', () => {
    assert.match(k(['explain', 'statefulset.spec.persistentVolumeClaimRetentionPolicy']), /FIELD: persistentVolumeClaimRetentionPolicy <StatefulSetPersistentVolumeClaimRetentionPolicy>/);
    assert.match(k(['explain', 'rc.spec.selector']), /KIND:\s+ReplicationController[\s\S]*FIELD: selector <map\[string\]string>/);
    assert.match(k(['explain', 'daemonsets.spec.updateStrategy.rollingUpdate.maxSurge']), /FIELD: maxSurge <IntOrString>/);
    assert.match(k(['explain', 'controllerrevisions']), /\n {2}revision\t<integer> -required-\n/);
    assert.match(k(['explain', 'podtemplates.template']), /FIELD: template <PodTemplateSpec>/);
  });

  it('refuses invalid objects and forbidden updates with upstream messages', () => {
    assert.equal(
      fails(['patch', 'sts', 'db', '--type=merge', '-p', '{"spec":{"serviceName":"other"}}']),
      `The StatefulSet "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden`,
    );
    assert.equal(
      fails(['patch', 'ds', 'agent', '--type=merge', '-p', '{"spec":{"selector":{"matchLabels":{"x":"y"}},"template":{"metadata":{"labels":{"x":"y"}}}}}']),
      'The DaemonSet "agent" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"agent", "x":"y"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    );
    const surging = daemonSet.replace('name: agent\n', 'name: surging\n').replace('spec:\n  selector', 'spec:\n  updateStrategy:\n    rollingUpdate:\n      maxSurge: 1\n  selector');
    assert.equal(fails(['create', '-f', '-'], surging), 'The DaemonSet "surging" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero');
    const unlabelled = replicationController.replace('name: web', 'name: bare').replace('    metadata:\n      labels:\n        app: web\n', '');
    assert.equal(fails(['create', '-f', '-'], unlabelled), 'The ReplicationController "bare" is invalid: spec.selector: Required value');
    assert.equal(
      fails(['create', '-f', '-'], statefulSet.replace('name: db\n', 'name: db.v2\n')),
      'The StatefulSet "db.v2" is invalid: metadata.name: Invalid value: "db.v2": must not contain dots',
    );
  });

  it('scales a StatefulSet through its scale subresource', () => {
    assert.equal(k(['scale', 'sts/db', '--replicas=3']).trim(), 'statefulset.apps/db scaled');
    assert.equal(k(['get', 'sts', 'db', '-o', 'jsonpath={.spec.replicas}']), '3');
    assert.match(k(['get', 'sts', 'db', '--no-headers']).trim(), /^db\s+\d\/3\s+\S+$/);
  });

  it('runs a ReplicationController: pods created, scaled with kubectl scale, events, deleted with it', async () => {
    assert.equal(k(['apply', '-f', '-'], replicationController).trim(), 'replicationcontroller/web created');
    // Defaulted from the template's labels.
    assert.equal(k(['get', 'rc', 'web', '-o', 'jsonpath={.spec.selector.app} {.metadata.labels.app}']), 'web web');
    await eventually(() => (/^web\s+2\s+2\s+2\s+\S+$/.test(k(['get', 'rc', 'web', '--no-headers']).trim()) ? true : undefined), 'kubectl get rc web to show 2 2 2', 60_000);
    assert.deepEqual(header(k(['get', 'rc', 'web', '-o', 'wide'])), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    assert.deepEqual(cells(k(['get', 'rc', 'web', '-o', 'wide', '--no-headers'])).slice(5), ['main', 'busybox:1.35', 'app=web']);

    assert.equal(k(['scale', 'rc/web', '--replicas=3']).trim(), 'replicationcontroller/web scaled');
    await eventually(() => (/^web\s+3\s+3\s+3\s+\S+$/.test(k(['get', 'rc', 'web', '--no-headers']).trim()) ? true : undefined), 'kubectl get rc web to show 3 3 3', 60_000);
    const owners = k(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {end}']);
    assert.deepEqual(owners.trim().split(' '), ['ReplicationController/web', 'ReplicationController/web', 'ReplicationController/web']);
    const events = await eventually(() => {
      const out = k(['get', 'events', '--field-selector', 'involvedObject.kind=ReplicationController,involvedObject.name=web', '-o', 'custom-columns=REASON:.reason,SOURCE:.source.component', '--no-headers']);
      return out.split('\n').filter((l) => /^SuccessfulCreate\s+replication-controller$/.test(l.trim())).length === 3 ? out : undefined;
    }, 'three SuccessfulCreate events from replication-controller', 30_000);
    assert.ok(events);

    k(['delete', 'rc', 'web', '--timeout=60s']);
    await eventually(() => (k(['get', 'pods', '-l', 'app=web', '-o', 'name']).trim() === '' ? true : undefined), 'the RC pods to go', 60_000);
  });
});
