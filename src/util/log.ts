// One structured logger (pino) for every component; the level comes from KITE_LOG_LEVEL.
import { pino, type Logger } from 'pino';

export type { Logger };

export function newLogger(component: string): Logger {
  return pino({ name: component, level: process.env.KITE_LOG_LEVEL ?? 'info' }, pino.destination(2));
}
