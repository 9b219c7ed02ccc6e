/** `flowplan migrate` and `flowplan jobs`: the database's schema and the background work on it. */
import { optional } from './args.js';
import { implement } from './command.ts';
import { count } from './input.ts';

export const maintenanceCommands = {
  migrate: implement({
    input: () => ({}),
    run: async (sql) => {
      const { migrate } = await import('../storage/migrate.ts');
      const applied = await migrate(sql);
      return {
        result: { applied },
        text: applied.length ? `applied ${applied.join(', ')}` : 'database is up to date',
      };
    },
  }),
  jobs: implement({
    input: (o) => ({ failed: count(optional(o, 'failed'), 'failed') ?? 20 }),
    run: async (sql, input) => {
      const { formatJobsReport, jobsReport } = await import('../services/jobs/report.ts');
      const report = await jobsReport(sql, input.failed);
      return { result: report, text: formatJobsReport(report) };
    },
  }),
};
