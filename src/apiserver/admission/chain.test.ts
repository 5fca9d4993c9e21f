import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forbidden } from '../../api/errors.js';
import { AdmissionChain, type AnyAdmissionPlugin } from './chain.js';
import type { AdmissionAttributes } from './interface.js';
import { admissionAttributes } from './testing.js';

const attrs = () => admissionAttributes('', 'v1', 'pods', { namespace: 'default', object: { metadata: { name: 'web', labels: {} } }, user: { name: 'alice', groups: [] } });

interface Spec {
  name: string;
  mutating?: boolean;
  validating?: boolean;
  handles?: boolean;
  refuses?: boolean;
}

/** Plugins that log each call and label the object, so order and in-place mutation are visible. */
function plugin(spec: Spec, log: string[]): AnyAdmissionPlugin {
  const act = (phase: string) => async (a: AdmissionAttributes) => {
    log.push(`${phase}:${spec.name}`);
    if (spec.refuses) throw forbidden(`${spec.name} refuses`);
    if (phase === 'admit') a.object!.metadata!.labels![spec.name] = 'seen';
  };
  return {
    name: spec.name,
    handles: () => spec.handles ?? true,
    ...(spec.mutating && { admit: act('admit') }),
    ...(spec.validating && { validate: act('validate') }),
  } as AnyAdmissionPlugin;
}

async function run(specs: Spec[]): Promise<{ log: string[]; labels: Record<string, string>; error?: string }> {
  const log: string[] = [];
  const chain = new AdmissionChain(specs.map((s) => plugin(s, log)));
  const a = attrs();
  try {
    await chain.admit(a);
    await chain.validate(a);
  } catch (err) {
    return { log, labels: a.object!.metadata!.labels!, error: (err as Error).message };
  }
  return { log, labels: a.object!.metadata!.labels! };
}

void describe('AdmissionChain', () => {
  const cases: [string, Spec[], Awaited<ReturnType<typeof run>>][] = [
    [
      'mutating in order, then validating in order',
      [{ name: 'v1', validating: true }, { name: 'm1', mutating: true }, { name: 'm2', mutating: true }, { name: 'v2', validating: true }],
      { log: ['admit:m1', 'admit:m2', 'validate:v1', 'validate:v2'], labels: { m1: 'seen', m2: 'seen' } },
    ],
    [
      'a plugin with both phases takes part in both',
      [{ name: 'both', mutating: true, validating: true }, { name: 'm', mutating: true }],
      { log: ['admit:both', 'admit:m', 'validate:both'], labels: { both: 'seen', m: 'seen' } },
    ],
    [
      'plugins that do not handle the request are skipped',
      [{ name: 'm1', mutating: true, handles: false }, { name: 'm2', mutating: true }, { name: 'v', validating: true, handles: false }],
      { log: ['admit:m2'], labels: { m2: 'seen' } },
    ],
    [
      'a mutating refusal stops everything after it',
      [{ name: 'm1', mutating: true, refuses: true }, { name: 'm2', mutating: true }, { name: 'v', validating: true }],
      { log: ['admit:m1'], labels: {}, error: 'm1 refuses' },
    ],
    [
      'a validating refusal stops later validators',
      [{ name: 'm', mutating: true }, { name: 'v1', validating: true, refuses: true }, { name: 'v2', validating: true }],
      { log: ['admit:m', 'validate:v1'], labels: { m: 'seen' }, error: 'v1 refuses' },
    ],
  ];
  for (const [name, specs, want] of cases) {
    void it(name, async () => assert.deepEqual(await run(specs), want));
  }
});
