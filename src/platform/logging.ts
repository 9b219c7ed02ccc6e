/** The process's logger: JSON lines (pino) at LOG_LEVEL, each tagged with the service's name. */
import pino, { type Logger } from 'pino';
import type { Config } from './config.ts';

export function createLogger(config: Config): Logger {
  return pino({ level: config.logLevel, base: { service: 'flowplan' } });
}
