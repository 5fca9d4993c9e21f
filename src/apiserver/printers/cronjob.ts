// batch/v1 CronJob: upstream's printCronJob columns.
import type { CronJob } from 'kubernetes-types/batch/v1.js';
import { humanDurationSince } from '../../api/duration.js';
import { column, formatLabelSelector, nameColumn, printer, templateCells, templateColumns } from './printer.js';

/** printBoolPtr: "<unset>" for a nil pointer. */
const boolPtr = (v: boolean | undefined): string => (v === undefined ? '<unset>' : v ? 'True' : 'False');

export const cronJobPrinter = printer<CronJob>(
  [
    nameColumn,
    column('Schedule', 'string', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    column(
      'Timezone',
      'string',
      'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones',
    ),
    column('Suspend', 'boolean', 'This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.'),
    column('Active', 'integer', 'A list of pointers to currently running jobs.'),
    column('Last Schedule', 'string', 'Information when was the last time the job was successfully scheduled.'),
    ...templateColumns(
      'A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors',
    ),
  ],
  (cj, now) => {
    const last = cj.status?.lastScheduleTime;
    return {
      cells: [
        cj.metadata.name,
        cj.spec?.schedule ?? '',
        cj.spec?.timeZone ?? '<none>',
        boolPtr(cj.spec?.suspend),
        cj.status?.active?.length ?? 0,
        last ? humanDurationSince(last, now) : '<none>',
        ...templateCells(cj, now, cj.spec?.jobTemplate?.spec?.template?.spec?.containers, formatLabelSelector(cj.spec?.jobTemplate?.spec?.selector)),
      ],
    };
  },
);
