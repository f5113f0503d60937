// Entry point: config -> database (embedded by default) -> migrations -> demo data -> app -> listen.
// Stops gracefully on SIGTERM/SIGINT: no new connections, in-flight work finished within a bound.
import { loadConfig, ConfigError } from './config.js';
import { createLogger } from './logger.js';
import { openDatabase } from './database/open.js';
import { createApp } from './app.js';
import { startHttpServer } from './http/server.js';
import { closeAppDeps, createAppDeps } from './app-deps.js';
import { startWorkers } from './workers.js';
import { seedDemoData } from './orgs/demo.js';

async function main(): Promise<void> {
  const startedAt = performance.now();
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Configuration error: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  // The app works on the database actually opened (embedded when DATABASE_URL is unset).
  const deps = createAppDeps({ db: database.db, config: { ...config, databaseUrl: database.url }, logger });

  const demo = database.embedded ? await seedDemoData(database.db) : null;
  const app = await createApp(deps);
  const server = await startHttpServer(app.callback(), config, deps.readiness, logger);
  const workers = await startWorkers(deps);
  const port = server.port;
  const base = config.publicBaseUrl.replace(/:\d+$/, `:${port}`);

  const lines = [
    '',
    `  Voice-call API is running.`,
    `  Base URL : ${base}/api/v1`,
    `  Docs     : ${base}/docs`,
    `  Database : ${database.embedded ? `embedded PostgreSQL (${config.dataDir})` : 'DATABASE_URL'}`,
  ];
  if (demo?.apiKey) {
    lines.push(
      `  Demo org : ${demo.orgId} (agent ${demo.agentId})`,
      `  API key  : ${demo.apiKey}   (shown once; store it)`,
      '',
      '  Try it:',
      `  curl -s -X POST ${base}/api/v1/calls \\`,
      `    -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\`,
      `    -d '{"agent_id":"${demo.agentId}","to_e164":"+919812345678"}'`,
    );
  } else if (demo) {
    lines.push(`  Demo org : ${demo.orgId}; new key: npm run admin -- key create --org ${demo.orgId}`);
  }
  process.stdout.write(lines.join('\n') + '\n\n');
  logger.info({ port, host: config.host, readyMs: Math.round(performance.now() - startedAt) }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timeout = config.shutdownTimeoutMs;
    // An interactive Ctrl-C stops at once; a SIGTERM from an orchestrator drains first.
    await server.shutdown({ drainMs: signal === 'SIGTERM' ? config.shutdownDrainMs : 0, timeoutMs: timeout });
    await Promise.all(workers.map((worker) => worker.stop(timeout)));
    await closeAppDeps(deps);
    await database.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  console.error('Failed to start:', error instanceof Error ? error.message : error);
  process.exit(1);
});
