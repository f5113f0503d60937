// Bearer API-key authentication with a short-lived cache that bounds how long a revoked key works.
import type { Db } from '../database/connect.js';
import type { Clock } from '../app-deps.js';
import { parseApiKey, secretMatches } from './api-keys.js';
import { findKeyByPrefix, type KeyLookup } from './api-key-queries.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from './policy.js';

/** Who is calling: the org every query of the request is scoped to. */
export interface AuthContext {
  orgId: string;
  keyPrefix: string;
  planId: string | null;
  rateLimitPerMinute: number;
}

/** Resolves Authorization headers to orgs; caches each key lookup for at most ttlMs. */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, { lookup: KeyLookup | undefined; expiresAt: number }>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /** The caller's context, or null for a missing, malformed, unknown or revoked key. DB errors propagate. */
  async authenticate(authorization: string | undefined): Promise<AuthContext | null> {
    if (!authorization) return null;
    const match = /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    if (!match) return null;
    const parsed = parseApiKey(match[1]!);
    if (!parsed) return null;
    const lookup = await this.lookup(parsed.prefix);
    if (!lookup || lookup.revoked || !secretMatches(parsed.secret, lookup.secretHash)) return null;
    return {
      orgId: lookup.orgId,
      keyPrefix: parsed.prefix,
      planId: lookup.planId,
      rateLimitPerMinute: lookup.rateLimitPerMinute ?? DEFAULT_RATE_LIMIT_PER_MINUTE,
    };
  }

  private async lookup(prefix: string): Promise<KeyLookup | undefined> {
    const now = this.clock.now().getTime();
    const cached = this.cache.get(prefix);
    if (cached && cached.expiresAt > now) return cached.lookup;
    const lookup = await findKeyByPrefix(this.db, prefix);
    if (this.ttlMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(prefix, { lookup, expiresAt: now + this.ttlMs });
    }
    return lookup;
  }
}
