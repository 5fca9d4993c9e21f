// PodDisruptionBudget.
import type { PodDisruptionBudget } from '../../api/types.js';
import { age, ageColumn, column, nameColumn, printer } from './printer.js';

export const podDisruptionBudgetPrinter = printer<PodDisruptionBudget>(
  [
    nameColumn,
    column('Min Available', 'string', 'The minimum number of pods that must be available.'),
    column('Max Unavailable', 'string', 'The maximum number of pods that may be unavailable.'),
    column('Allowed Disruptions', 'integer', 'Calculated number of pods that may be disrupted at this time.'),
    ageColumn,
  ],
  (pdb, now) => ({
    cells: [
      pdb.metadata.name,
      pdb.spec?.minAvailable != null ? String(pdb.spec.minAvailable) : 'N/A',
      pdb.spec?.maxUnavailable != null ? String(pdb.spec.maxUnavailable) : 'N/A',
      pdb.status?.disruptionsAllowed ?? 0,
      age(pdb, now),
    ],
  }),
);
