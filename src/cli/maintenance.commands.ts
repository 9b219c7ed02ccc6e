/** `flowplan migrate` and `flowplan jobs`: the database's schema and the background work on it. */
import { migrate } from '../storage/migrate.ts';
import { count, optional } from './args.ts';
import { command } from './command.ts';

export const maintenanceCommands = [
  command({
    name: 'migrate',
    summary: 'set up the database, or bring its schema up to date',
    options: {},
    json: '{ "applied": [file names] }: the migrations this run applied',
    notes: [
      'With no DATABASE_URL it initialises the embedded Postgres under FLOWPLAN_DATA_DIR when there is none yet. ' +
        'Every other command refuses a database that does not exist or has no flowplan schema.',
    ],
    examples: ['flowplan migrate', 'FLOWPLAN_DATA_DIR=/srv/flowplan flowplan migrate --json'],
    createsDatabase: true,
    input: () => ({}),
    run: async (sql) => {
      const applied = await migrate(sql);
      return {
        result: { applied },
        text: applied.length ? `applied ${applied.join(', ')}` : 'database is up to date',
      };
    },
  }),
  command({
    name: 'jobs',
    summary: 'job queues by state, the newest failed jobs, the outbox and webhook backlogs',
    options: {
      failed: {
        type: 'string',
        value: 'N',
        description: 'how many of the newest failed jobs to show (default 20)',
      },
    },
    json: '{ "queues", "failed", "outbox", "webhooks" }',
    examples: ['flowplan jobs --failed 5'],
    input: (o) => ({ failed: count(optional(o, 'failed'), 'failed') ?? 20 }),
    run: async (sql, input) => {
      // Loaded here, not at the top: its stores load the Postgres driver, which help and usage
      // errors (every command's list of commands is this file's) never need.
      const { formatJobsReport, jobsReport } = await import('../services/jobs/report.ts');
      const report = await jobsReport(sql, input.failed);
      return { result: report, text: formatJobsReport(report) };
    },
  }),
];
