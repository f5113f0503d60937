// The JSON logger (pino). Authorization headers and secrets are redacted wherever they appear.
import pino, { type Logger, type DestinationStream } from 'pino';

/** Creates the service logger at `level`, writing to stdout or the given stream. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: {
        paths: ['authorization', '*.authorization', 'headers.authorization', 'secret', '*.secret', 'key', '*.key'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
