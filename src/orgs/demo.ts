// Demo data for a first start on an empty embedded database: an org with credits, a plan, an agent, a key.
import type { Db } from '../database/connect.js';
import { createAgent, createOrg, firstOrgWithAgent } from './service.js';
import { issueApiKey } from './api-keys.js';

export interface DemoData {
  orgId: string;
  agentId: string;
  /** The full key, only when it was created by this call. */
  apiKey: string | null;
}

/** Creates the demo org once; on later starts returns the existing org's ids and no key. */
export async function seedDemoData(db: Db): Promise<DemoData> {
  const existing = await firstOrgWithAgent(db);
  if (existing) return { ...existing, apiKey: null };
  const org = await createOrg(db, { name: 'Demo org', creditsPaise: 100_000, planId: 'starter' });
  const agent = await createAgent(db, { orgId: org.id, name: 'Demo agent', language: 'en-IN' });
  const { key } = await issueApiKey(db, org.id);
  return { orgId: org.id, agentId: agent.id, apiKey: key };
}
