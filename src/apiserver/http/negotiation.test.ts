import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateOutput, tableOptions, wantsAggregatedDiscovery } from './negotiation.js';
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
    // goautoneg's order: q first (q=0 is only last, not refused), concrete types before wildcards.
    ['application/json;q=0', { kind: 'object', yaml: false }],
    ['application/json;q=0.5,application/yaml', { kind: 'object', yaml: true }],
    ['application/yaml;q=bogus,application/json;q=0.1', { kind: 'object', yaml: false }],
    ['*/*,application/yaml', { kind: 'object', yaml: true }],
    ['*', { kind: 'object', yaml: false }],
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

describe('tableOptions', () => {
  const table = { kind: 'table', yaml: false } as const;
  it('reads includeObject for a Table, Metadata when absent or empty', () => {
    assert.equal(tableOptions(table, new URLSearchParams('')).includeObject, 'Metadata');
    assert.equal(tableOptions(table, new URLSearchParams('includeObject=')).includeObject, 'Metadata');
    assert.equal(tableOptions(table, new URLSearchParams('includeObject=None')).includeObject, 'None');
  });
  it("refuses any other value with upstream's 400, and ignores it when no Table is asked for", () => {
    assert.throws(
      () => tableOptions(table, new URLSearchParams('includeObject=bogus')),
      (err: unknown) =>
        err instanceof StatusError &&
        err.code === 400 &&
        err.message === `Unable to convert to Table as requested: includeObject: Invalid value: "bogus": must be 'Metadata', 'Object', 'None', or empty`,
    );
    assert.deepEqual(tableOptions({ kind: 'object', yaml: false }, new URLSearchParams('includeObject=bogus')), { kind: 'object', yaml: false });
  });
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
