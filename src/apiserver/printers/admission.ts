// admissionregistration.k8s.io: webhook configurations, ValidatingAdmissionPolicy and its bindings.
import type { MutatingWebhookConfiguration, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingWebhookConfiguration } from '../../api/types.js';
import { age, ageColumn, column, formatLabelSelector, nameColumn, printer } from './printer.js';

export const webhookConfigurationPrinter = printer<MutatingWebhookConfiguration | ValidatingWebhookConfiguration>(
  [nameColumn, column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'), ageColumn],
  (c, now) => ({ cells: [c.metadata.name, c.webhooks?.length ?? 0, age(c, now)] }),
);

export const validatingAdmissionPolicyPrinter = printer<ValidatingAdmissionPolicy>(
  [
    nameColumn,
    column('Validations', 'integer', 'Validations indicates the number of validation rules defined in this configuration'),
    column('ParamKind', 'string', 'ParamKind specifies the kind of resources used to parameterize this policy'),
    ageColumn,
  ],
  (p, now) => {
    const kind = p.spec?.paramKind;
    return { cells: [p.metadata.name, p.spec?.validations?.length ?? 0, kind ? `${kind.apiVersion ?? ''}/${kind.kind ?? ''}` : '<unset>', age(p, now)] };
  },
);

/** The PARAMREF cell: namespace/name ("*" for any namespace), else the selector, else "<unset>". */
function paramRefCell(b: ValidatingAdmissionPolicyBinding): string {
  const ref = b.spec?.paramRef;
  if (!ref) return '<unset>';
  if (ref.name) return `${ref.namespace || '*'}/${ref.name}`;
  return ref.selector ? formatLabelSelector(ref.selector) : '<unset>';
}

export const validatingAdmissionPolicyBindingPrinter = printer<ValidatingAdmissionPolicyBinding>(
  [
    nameColumn,
    column('PolicyName', 'string', 'PolicyName indicates the policy definition which the policy binding binded to'),
    column('ParamRef', 'string', 'ParamRef indicates the param resource which sets the configration param'),
    ageColumn,
  ],
  (b, now) => ({ cells: [b.metadata.name, b.spec?.policyName ?? '', paramRefCell(b), age(b, now)] }),
);
