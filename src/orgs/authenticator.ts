// Bearer API-key authentication. Found keys are cached for a short time (the bound on how long a revoked
// key or a changed plan goes unnoticed); unknown keys are remembered apart, in a bounded cache that never
// pushes out a valid key. Failed authentications are counted per client address in the database, so all
// API processes share one allowance; an address over it gets no more lookups of keys it has not used
// successfully, until its allowance refills. A key that worked recently is always looked up: a flood of
// made-up keys from the same address (every client behind one proxy) never locks a valid key out.
import { LRUCache } from 'lru-cache';
import type { Db } from '../database/connect.js';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { parseApiKey, secretMatches } from './api-keys.js';
import { findKeyByPrefix, markKeyUsed, type KeyLookup } from './api-key-queries.js';
import { deleteFullAllowances, spendAuthFailure } from './auth-failure-queries.js';
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
/** Client addresses whose allowance this process remembers; the quietest are forgotten first. */
const COUNTED_ADDRESSES = 50_000;
/** Key prefixes that authenticated successfully lately, looked up even from an address out of failures. */
const RECENTLY_VALID_KEYS = 100_000;
/** How long a key that worked stays exempt from its address's allowance without working again. */
const RECENTLY_VALID_MS = 24 * 60 * 60 * 1000;
/** A key's last use is written at most this often from one process (the dashboard shows it to the minute). */
const USE_MARK_INTERVAL_MS = 60_000;

/** Settings of the authenticator. */
export interface AuthenticatorOptions {
  /** How long a key lookup is reused (0: never). */
  cacheTtlMs: number;
  /** Failed authentications one address may make per minute. */
  failuresPerMinute: number;
}

/** A client address's allowance of failed authentications as the database last reported it: a token bucket. */
interface Allowance {
  tokens: number;
  at: number;
}

/** Resolves Authorization headers to orgs. */
export class ApiKeyAuthenticator {
  private readonly known: LRUCache<string, KeyLookup> | null;
  private readonly unknown: LRUCache<string, true> | null;
  private readonly allowances: LRUCache<string, Allowance>;
  private readonly recentlyValid: LRUCache<string, true>;
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
    this.recentlyValid = new LRUCache({ max: RECENTLY_VALID_KEYS, ttl: RECENTLY_VALID_MS, perf });
  }

  /**
   * The caller's context, or null for a missing, malformed, unknown or revoked key. Throws DomainError
   * too_many_requests when `address` has used up its failed authentications and the key is not one that
   * worked lately; database errors propagate.
   */
  async authenticate(authorization: string | undefined, address: string): Promise<AuthContext | null> {
    const parsed = parseBearer(authorization);
    const cached = parsed ? this.known?.get(parsed.prefix) : undefined;
    if (parsed && cached && isValid(cached, parsed.secret)) return this.accepted(cached, parsed.prefix);
    if (!(parsed && this.recentlyValid.has(parsed.prefix))) this.refuseWhenExhausted(address);
    const lookup = parsed ? await this.lookup(parsed.prefix) : undefined;
    if (parsed && lookup && isValid(lookup, parsed.secret)) return this.accepted(lookup, parsed.prefix);
    await this.countFailure(address);
    return null;
  }

  /**
   * The context of a valid key, having noted that it worked (for its address's allowance) and its use:
   * written in the background at most once a minute per key, so the request never waits for it. A
   * failed write is dropped; the next use a minute later writes again, and "last used" is only shown.
   */
  private accepted(lookup: KeyLookup, prefix: string): AuthContext {
    this.recentlyValid.set(prefix, true);
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

  /** The allowance of `address` now, refilled locally since the database last reported it (full if unknown). */
  private allowanceOf(address: string): Allowance {
    const now = this.clock.now().getTime();
    const perMinute = this.options.failuresPerMinute;
    const last = this.allowances.get(address);
    if (!last) return { tokens: perMinute, at: now };
    return { tokens: Math.min(perMinute, last.tokens + ((now - last.at) * perMinute) / 60_000), at: now };
  }

  private refuseWhenExhausted(address: string): void {
    const allowance = this.allowanceOf(address);
    if (allowance.tokens >= 1) return;
    const waitS = Math.max(1, Math.ceil(((1 - allowance.tokens) * 60) / this.options.failuresPerMinute));
    throw new DomainError(
      'too_many_requests',
      `Too many failed authentications from this address; retry in ${waitS} ${waitS === 1 ? 'second' : 'seconds'} with a valid API key.`,
      { headers: { 'Retry-After': String(waitS) } },
    );
  }

  /** Spends one of the address's failures in the database and remembers what is left of its allowance. */
  private async countFailure(address: string): Promise<void> {
    const spent = await spendAuthFailure(this.db, address, this.options.failuresPerMinute, this.clock.now().getTime());
    this.allowances.set(address, { tokens: spent.tokens, at: spent.atMs });
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

/** Removes the failed-authentication allowances that have refilled completely by `nowMs`; returns how many. */
export function pruneAuthFailureAllowances(db: Db, nowMs: number): Promise<number> {
  return deleteFullAllowances(db, nowMs);
}
