// Password hashes run on a small pool of threads of their own (piscina) at a lowered scheduling priority
// (each thread lowers its own, see ./hash-worker.ts: piscina's niceIncrement needs an optional native addon),
// so a burst of sign-ins never takes a core from the event loop or the database: a hash gets the CPU the
// rest of the machine leaves. How many run at once is decided before they get here (./hash-pool.ts).
import path from 'node:path';
import { Piscina } from 'piscina';
import type { HashTask, HashThreadData } from './hash-worker.js';
import { HASH_THREADS, HASH_THREAD_NICE_INCREMENT } from './policy.js';

/** The worker module beside this one, as built (.js) or as source run by Node's type stripping (.ts). */
const WORKER = new URL(`./hash-worker${path.extname(new URL(import.meta.url).pathname)}`, import.meta.url);

let pool: Piscina<HashTask, Uint8Array> | null = null;

/** Derives a password's scrypt key on the hashing threads (started on first use, kept from then on). */
export async function deriveOnHashThread(task: HashTask): Promise<Buffer> {
  pool ??= new Piscina<HashTask, Uint8Array>({
    filename: WORKER.href,
    minThreads: HASH_THREADS,
    maxThreads: HASH_THREADS,
    workerData: { niceIncrement: HASH_THREAD_NICE_INCREMENT } satisfies HashThreadData,
  });
  const key = await pool.run(task);
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength);
}
