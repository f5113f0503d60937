// A delivery worker in its own process, for crash and deletion tests: started by a test, killed with
// SIGKILL. Reads WORKER_DATABASE_URL and WORKER_CA_PEM, and WORKER_LISTEN=off to run without a LISTEN
// connection (sweeping only, and never hearing deletion notifications); prints "ready" once it is sweeping.
import { createAppDeps } from '../../src/app-deps.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/database/connect.js';
import { DeliveryWorker } from '../../src/webhooks/delivery/worker.js';
import { createLogger } from '../../src/logger.js';

const url = process.env.WORKER_DATABASE_URL!;
const config = {
  ...loadConfig({ DATABASE_URL: url, WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8' }),
  webhookCaCerts: [process.env.WORKER_CA_PEM!],
};
const { db } = connectDatabase(url, { poolSize: 4 });
const deps = createAppDeps({ db, config, logger: createLogger('silent') });
const worker = new DeliveryWorker(deps, { listenUrl: process.env.WORKER_LISTEN === 'off' ? null : url });
worker.start();
process.stdout.write('ready\n');
