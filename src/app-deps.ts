// The explicit dependencies every handler, service and worker receives; built once per app.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './database/connect.js';
import type { VoiceProvider } from './calls/provider/types.js';

/** The source of "now"; tests substitute a controllable one. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface AppDeps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  provider: VoiceProvider;
}
