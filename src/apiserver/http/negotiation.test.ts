import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateOutput, wantsAggregatedDiscovery } from './negotiation.js';
import { StatusError } from '../../api/errors.js';

describe('negotiateOutput', () => {
  const table = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
  const cases: [string | undefined, ReturnType<typeof negotiateOutput> | 406][] = [
    [undefined, { kind: 'object', yaml: false }],
    ['application/json', { kind: 'object', yaml: false }],
    ['*/*', { kind: 'object', yaml: false }],
    [table, { kind: 'table', yaml: false }],
    ['application/vnd.kubernetes.protobuf,application/json', { kind: 'object', yaml: false }],
    ['application/vnd.kubernetes.protobuf, */*', { kind: 'object', yaml: false }],
    ['application/yaml', { kind: 'object', yaml: true }],
    ['application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io', { kind: 'partial', yaml: false }],
    ['application/json;as=Table;v=v2;g=meta.k8s.io,application/json', { kind: 'object', yaml: false }],
    ['application/vnd.kubernetes.protobuf', 406],
    ['text/html', 406],
  ];
  for (const [accept, want] of cases) {
    it(`${accept ?? '(none)'}`, () => {
      if (want === 406) {
        assert.throws(() => negotiateOutput(accept, true), (err: unknown) => err instanceof StatusError && err.code === 406);
      } else {
        assert.deepEqual(negotiateOutput(accept, true), want);
      }
    });
  }
});

describe('wantsAggregatedDiscovery', () => {
  it('recognizes what kubectl sends, v2 first', () => {
    const kubectl =
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
    assert.equal(wantsAggregatedDiscovery(kubectl), 'v2');
    assert.equal(wantsAggregatedDiscovery('application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList'), 'v2beta1');
    assert.equal(wantsAggregatedDiscovery('application/json, */*'), undefined);
  });
});
