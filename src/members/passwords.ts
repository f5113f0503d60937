// Password hashing with Node's scrypt (memory-hard): a random salt per password, the parameters stored
// with the hash so they can be raised later, and a constant-time comparison. The hashing itself runs on
// the low-priority hashing threads (./hash-threads.ts).
import { randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { deriveOnHashThread } from './hash-threads.js';

/** 2^15 rounds of 8-block mixing: 32 MiB and about a tenth of a second of a core per hash. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  const maxmem = 256 * (options.N ?? 0) * (options.r ?? 0);
  return deriveOnHashThread({ password, salt, keyLength: KEY_LENGTH, options: { ...options, maxmem } });
}

/** The stored form of a password: `scrypt$N$r$p$salt$hash` (salt and hash in base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether `password` matches `stored`; a stored value of another form never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, expected] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !expected) return false;
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  const want = Buffer.from(expected, 'base64url');
  return key.length === want.length && timingSafeEqual(key, want);
}

/** A hash no password matches, checked against when an email is unknown so both answers take as long. */
export const UNMATCHABLE_HASH = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${randomBytes(16).toString('base64url')}$${randomBytes(KEY_LENGTH).toString('base64url')}`;
