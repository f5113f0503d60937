// The operator commands' logger: JSON lines on stderr (stdout carries the command's output), at LOG_LEVEL.
import pino, { type Logger } from 'pino';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';

/** A logger writing to stderr at the configured level. */
export function cliLogger(): Logger {
  return createLogger(loadConfig().logLevel, pino.destination(2));
}
