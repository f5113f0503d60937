// An API process whose voice provider (the test provider) never answers a placement: it prints
// "placing <call id>" once the placement's first transaction has committed and the provider has been
// asked, so a test can kill it with SIGKILL exactly between the two transactions. Reads
// PLACING_DATABASE_URL; prints "listening <port>" once it serves.
import { createApp, requestListener } from '../../src/app.js';
import { createAppDeps } from '../../src/app-deps.js';
import { loadConfig } from '../../src/config.js';
import { connectDatabase } from '../../src/database/connect.js';
import { startHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { TestProvider, testProviderModule } from './test-provider.js';

const url = process.env.PLACING_DATABASE_URL!;
const config = { ...loadConfig({ DATABASE_URL: url, PROVIDER_TIMEOUT_MS: '60000' }), port: 0, host: '127.0.0.1' };
const provider = new TestProvider();
provider.onPlace = (request) => {
  process.stdout.write(`placing ${request.callId}\n`);
  return new Promise(() => undefined);
};
const { db } = connectDatabase(url, { poolSize: 2 });
const deps = createAppDeps({ db, config, logger: createLogger('silent'), providers: [testProviderModule(provider)] });
const server = await startHttpServer(requestListener(await createApp(deps)), config, deps.readiness, deps.logger);
process.stdout.write(`listening ${server.port}\n`);
