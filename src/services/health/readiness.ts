/** Readiness (`GET /readyz`): whether this process can serve requests, as a load balancer asks. */
import { databaseUnreachable } from '../../platform/errors.ts';
import { databaseAnswers, type Sql } from '../../storage/db.ts';

/** A load balancer needs its answer fast: a database that has not answered in 1.5 s is not there. */
const READY_TIMEOUT_MS = 1500;

/** Resolves when the database answers; SERVICE_UNAVAILABLE (retry in 2 s) when it does not in time. */
export async function checkReady(sql: Sql): Promise<void> {
  if (!(await databaseAnswers(sql, READY_TIMEOUT_MS))) throw databaseUnreachable();
}
