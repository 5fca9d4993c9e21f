import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { ConfigMap, Namespace, ServiceAccount } from '../../api/types.js';
import { FakeApi } from '../../apiserver/testing/fakeapi.js';
import { SharedInformerFactory } from '../../client/factory.js';
import { FakeClock } from '../../util/clock.js';
import { ServiceAccountsController } from './controller.js';
import { RootCACertPublisher, descriptionAnnotation, rootCAConfigMapName } from '../rootcacertpublisher/controller.js';
import { until } from '../kit/testing.js';

describe('serviceaccount-controller and root-ca-certificate-publisher', () => {
  it('every active namespace gets the default ServiceAccount and kube-root-ca.crt, both made again and kept equal', async () => {
    const clock = new FakeClock();
    const api = await FakeApi.start({ clock });
    const client = api.client();
    const informers = new SharedInformerFactory({ client, clock });
    const logger = pino({ level: 'silent' });
    const controllers = [new ServiceAccountsController({ client, informers, clock, logger }), new RootCACertPublisher({ client, informers, clock, logger, rootCA: 'CA PEM' })];
    for (const c of controllers) c.start();
    informers.start();
    const sas = (ns: string) => client.resource<ServiceAccount>('', 'v1', 'serviceaccounts').namespace(ns);
    const cms = (ns: string) => client.resource<ConfigMap>('', 'v1', 'configmaps').namespace(ns);
    try {
      await client.resource<Namespace>('', 'v1', 'namespaces').create({ metadata: { name: 'team' } });
      for (const ns of ['default', 'kube-system', 'team']) {
        await until(() => sas(ns).get('default'), `default ServiceAccount in ${ns}`);
        const cm = await until(() => cms(ns).get(rootCAConfigMapName), `kube-root-ca.crt in ${ns}`);
        assert.deepEqual(cm.data, { 'ca.crt': 'CA PEM' });
        assert.match(cm.metadata?.annotations?.[descriptionAnnotation] ?? '', /^Contains a CA bundle/);
      }
      const before = await sas('team').get('default');
      await sas('team').delete('default');
      const again = await until(async () => {
        const sa = await sas('team').get('default');
        return sa.metadata?.uid !== before.metadata?.uid ? sa : undefined;
      }, 'a new default ServiceAccount');
      assert.ok(again.metadata?.uid);

      const cm = await cms('team').get(rootCAConfigMapName);
      await cms('team').update({ ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } });
      await until(async () => ((await cms('team').get(rootCAConfigMapName)).data?.['ca.crt'] === 'CA PEM' ? true : undefined), 'ca.crt restored');
      assert.deepEqual((await cms('team').get(rootCAConfigMapName)).data, { 'ca.crt': 'CA PEM' });
      await cms('team').delete(rootCAConfigMapName);
      await until(() => cms('team').get(rootCAConfigMapName), 'kube-root-ca.crt made again');
    } finally {
      await Promise.all(controllers.map((c) => c.stop()));
      await informers.shutdown();
      await api.stop();
    }
  });
});
