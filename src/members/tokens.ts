// Secret tokens for links and sessions: 256 bits from the CSPRNG, stored only as their SHA-256.
import { hash, randomBytes } from 'node:crypto';

/** A new random token, URL- and cookie-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a token. It has 256 bits of entropy, so a fast hash suffices. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}
