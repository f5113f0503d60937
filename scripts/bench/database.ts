// The benchmark's database: DATABASE_URL when set, else an embedded PostgreSQL of its own (separate
// data directory and port, so the demo data and a running dev server are left alone). Migrated on open.
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type OpenDatabase } from '../../src/database/open.js';

/** Where the embedded benchmark cluster lives unless DATA_DIR / EMBEDDED_PG_PORT say otherwise. */
const BENCH_DATA_DIR = path.resolve('.data/bench');
const BENCH_PG_PORT = '54339';

/** Opens (and migrates) the benchmark database with a pool of `poolSize`; throws when unreachable. */
export async function openBenchDatabase(poolSize: number): Promise<OpenDatabase> {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: process.env.DATA_DIR || BENCH_DATA_DIR,
    EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT || BENCH_PG_PORT,
    DB_POOL_SIZE: String(poolSize),
    // Seeding runs statements far longer than a request's.
    DB_STATEMENT_TIMEOUT_MS: '590000',
    DB_QUERY_TIMEOUT_MS: '600000',
  });
  return openDatabase(config, { migrations: 'apply' });
}
