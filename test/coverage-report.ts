/**
 * Writes SUMMARY_FILE from the coverage a run left in RAW_DIR. test/run.ts runs it in a process
 * of its own with a larger heap: the report reads every process's coverage at once (about 1.5 GB
 * of it for a whole run, 2.6 GB of memory), and V8's default ceiling, a quarter of the machine's
 * memory, is too low on a small CI machine.
 */
import path from 'node:path';
import { RAW_DIR, SUMMARY_FILE, writeSummary } from './coverage.ts';

await writeSummary(RAW_DIR, path.dirname(SUMMARY_FILE));
