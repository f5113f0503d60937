// The body of a password-hashing thread (./hash-threads.ts runs it in a pool): lowers the thread's own
// scheduling priority as it starts (on Linux), then derives scrypt keys synchronously, so the work stays on this
// low-priority thread instead of the process-wide libuv pool.
import { scryptSync, type ScryptOptions } from 'node:crypto';
import os from 'node:os';
import { workerData } from 'piscina';

/** One key to derive. */
export interface HashTask {
  password: string;
  salt: Uint8Array;
  keyLength: number;
  options: ScryptOptions;
}

/** What the pool gives each thread as it starts. */
export interface HashThreadData {
  /** How much to raise this thread's nice value (Linux keeps one per thread). */
  niceIncrement: number;
}

// Only where the nice value is the thread's own: elsewhere (macOS) it would lower the whole process.
if (process.platform === 'linux') {
  const { niceIncrement } = workerData as HashThreadData;
  os.setPriority(Math.min(19, os.getPriority() + niceIncrement));
}

/** Derives the key of `task` (the password NFC-normalised first). */
export default function deriveKey(task: HashTask): Uint8Array {
  return scryptSync(task.password.normalize('NFC'), task.salt, task.keyLength, task.options);
}
