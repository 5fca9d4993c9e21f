import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { controllerDescriptors, isControllerEnabled, validateControllers, type ControllerDescriptor } from './descriptors.js';

const d = (name: string, disabledByDefault = false): ControllerDescriptor => ({ name, aliases: [], identity: name, disabledByDefault, init: () => undefined });

describe('--controllers', () => {
  it('* enables those on by default; a name enables; -name disables; first mention wins', () => {
    const on = d('a');
    const off = d('b', true);
    const cases: [string[], boolean, boolean][] = [
      [['*'], true, false],
      [['*', 'b'], true, true],
      [['*', '-a'], false, false],
      [['a'], true, false],
      [[], false, false],
      [['-a', 'a', '*'], false, false],
    ];
    for (const [list, a, b] of cases) assert.deepEqual([isControllerEnabled(on, list), isControllerEnabled(off, list)], [a, b], list.join(','));
  });

  it('accepts aliases and refuses unknown names with upstream message', () => {
    assert.deepEqual(validateControllers(['*', '-garbagecollector', 'namespace']), ['*', '-garbage-collector-controller', 'namespace-controller']);
    assert.throws(() => validateControllers(['-nope']), { message: '"nope" is not in the list of known controllers' });
  });

  it('every descriptor has a unique name and an identity', () => {
    const names = controllerDescriptors.flatMap((c) => [c.name, ...c.aliases]);
    assert.equal(new Set(names).size, names.length);
    for (const c of controllerDescriptors) assert.ok(c.identity);
  });
});
