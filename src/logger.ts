// The JSON logger (pino). Authorization headers and secrets are redacted wherever they appear.
import pino, { type Logger, type DestinationStream } from 'pino';

/**
 * Creates the service logger at `level`, writing to stdout or the given stream; `instance` (the
 * process's name) goes on every line when given.
 */
export function createLogger(level: string, destination?: DestinationStream, instance?: string): Logger {
  return pino(
    {
      level,
      base: instance ? { instance } : undefined,
      redact: {
        paths: ['authorization', '*.authorization', 'headers.authorization', 'secret', '*.secret', 'key', '*.key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
