// Bearer API-key authentication. Found keys are cached for a short time (the bound on how long a revoked
// key or a changed plan goes unnoticed); unknown keys are remembered apart, in a bounded cache that never
// pushes out a valid key. Failed authentications are counted per client address, and an address over
// its allowance gets no more database lookups until its allowance refills.
import { LRUCache } from 'lru-cache';
import type { Db } from '../database/connect.js';
import type { Clock } from '../app-deps.js';
import { DomainError } from '../errors.js';
import { parseApiKey, secretMatches } from './api-keys.js';
import { findKeyByPrefix, markKeyUsed, type KeyLookup } from './api-key-queries.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from './policy.js';

/** Who is calling: the org every query of the request is scoped to. */
export interface AuthContext {
  orgId: string;
  keyPrefix: string;
  planId: string | null;
  rateLimitPerMinute: number;
}

/** Keys kept in the cache of found keys; far above the number of keys a deployment has in use. */
const KNOWN_KEYS = 100_000;
/** Unknown key prefixes remembered; the oldest are forgotten first. */
const UNKNOWN_KEYS = 20_000;
/** Client addresses whose failed authentications are counted; the quietest are forgotten first. */
const COUNTED_ADDRESSES = 50_000;
/** A key's last use is written at most this often from one process (the dashboard shows it to the minute). */
const USE_MARK_INTERVAL_MS = 60_000;

/** Settings of the authenticator. */
export interface AuthenticatorOptions {
  /** How long a key lookup is reused (0: never). */
  cacheTtlMs: number;
  /** Failed authentications one address may make per minute. */
  failuresPerMinute: number;
}

/** A client address's allowance of failed authentications: a token bucket. */
interface Allowance {
  tokens: number;
  at: number;
}

/** Resolves Authorization headers to orgs. */
export class ApiKeyAuthenticator {
  private readonly known: LRUCache<string, KeyLookup> | null;
  private readonly unknown: LRUCache<string, true> | null;
  private readonly allowances: LRUCache<string, Allowance>;
  /** When this process last wrote each key's last use. */
  private readonly usesMarked = new LRUCache<string, number>({ max: KNOWN_KEYS });

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: AuthenticatorOptions,
  ) {
    const perf = { now: () => clock.now().getTime() };
    const ttl = options.cacheTtlMs;
    this.known = ttl > 0 ? new LRUCache({ max: KNOWN_KEYS, ttl, perf }) : null;
    this.unknown = ttl > 0 ? new LRUCache({ max: UNKNOWN_KEYS, ttl, perf }) : null;
    this.allowances = new LRUCache({ max: COUNTED_ADDRESSES });
  }

  /**
   * The caller's context, or null for a missing, malformed, unknown or revoked key. Throws DomainError
   * too_many_requests when `address` has used up its failed authentications and the key is not one
   * already known to be valid; database errors propagate.
   */
  async authenticate(authorization: string | undefined, address: string): Promise<AuthContext | null> {
    const parsed = parseBearer(authorization);
    const cached = parsed ? this.known?.get(parsed.prefix) : undefined;
    if (parsed && cached && isValid(cached, parsed.secret)) return this.used(cached, parsed.prefix);
    this.refuseWhenExhausted(address);
    const lookup = parsed ? await this.lookup(parsed.prefix) : undefined;
    if (parsed && lookup && isValid(lookup, parsed.secret)) return this.used(lookup, parsed.prefix);
    this.countFailure(address);
    return null;
  }

  /**
   * The context of a valid key, having noted its use: written in the background at most once a minute
   * per key, so the request never waits for it. A failed write is dropped; the next use a minute later
   * writes again, and "last used" is only shown, never enforced.
   */
  private used(lookup: KeyLookup, prefix: string): AuthContext {
    const now = this.clock.now();
    const marked = this.usesMarked.get(prefix);
    if (marked === undefined || now.getTime() - marked >= USE_MARK_INTERVAL_MS) {
      this.usesMarked.set(prefix, now.getTime());
      markKeyUsed(this.db, prefix, now).catch(() => this.usesMarked.delete(prefix));
    }
    return contextOf(lookup, prefix);
  }

  private async lookup(prefix: string): Promise<KeyLookup | undefined> {
    if (this.unknown?.has(prefix)) return undefined;
    const lookup = this.known?.get(prefix) ?? (await findKeyByPrefix(this.db, prefix));
    if (lookup) this.known?.set(prefix, lookup);
    else this.unknown?.set(prefix, true);
    return lookup;
  }

  private allowanceOf(address: string): Allowance {
    const now = this.clock.now().getTime();
    const perMinute = this.options.failuresPerMinute;
    const allowance = this.allowances.get(address) ?? { tokens: perMinute, at: now };
    allowance.tokens = Math.min(perMinute, allowance.tokens + ((now - allowance.at) * perMinute) / 60_000);
    allowance.at = now;
    return allowance;
  }

  private refuseWhenExhausted(address: string): void {
    const allowance = this.allowanceOf(address);
    if (allowance.tokens >= 1) return;
    const waitS = Math.max(1, Math.ceil(((1 - allowance.tokens) * 60) / this.options.failuresPerMinute));
    throw new DomainError(
      'too_many_requests',
      `Too many failed authentications from this address; retry in ${waitS} seconds with a valid API key.`,
      { headers: { 'Retry-After': String(waitS) } },
    );
  }

  private countFailure(address: string): void {
    const allowance = this.allowanceOf(address);
    allowance.tokens = Math.max(0, allowance.tokens - 1);
    this.allowances.set(address, allowance);
  }
}

function parseBearer(authorization: string | undefined): { prefix: string; secret: string } | null {
  if (!authorization) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
  return match ? parseApiKey(match[1]!) : null;
}

function isValid(lookup: KeyLookup, secret: string): boolean {
  return !lookup.revoked && secretMatches(secret, lookup.secretHash);
}

function contextOf(lookup: KeyLookup, prefix: string): AuthContext {
  return {
    orgId: lookup.orgId,
    keyPrefix: prefix,
    planId: lookup.planId,
    rateLimitPerMinute: lookup.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
  };
}
