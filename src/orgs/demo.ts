// Demo data for a first start on an empty embedded database: an org with credits, a plan, an agent, and
// a test key and a live key.
import type { Db } from '../database/connect.js';
import { createAgent, createOrg, firstOrgWithAgent } from './service.js';
import { issueApiKey } from './api-keys.js';

export interface DemoData {
  orgId: string;
  agentId: string;
  /** The full keys, only when they were created by this call. */
  keys: { test: string; live: string } | null;
}

/** Creates the demo org once; on later starts returns the existing org's ids and no keys. */
export async function seedDemoData(db: Db): Promise<DemoData> {
  const existing = await firstOrgWithAgent(db);
  if (existing) return { ...existing, keys: null };
  const org = await createOrg(db, { name: 'Demo org', creditsPaise: 100_000, planId: 'starter' });
  const agent = await createAgent(db, { orgId: org.id, name: 'Demo agent', language: 'en-IN' });
  const test = await issueApiKey(db, org.id, { mode: 'test' });
  const live = await issueApiKey(db, org.id, { mode: 'live' });
  return { orgId: org.id, agentId: agent.id, keys: { test: test.key, live: live.key } };
}
