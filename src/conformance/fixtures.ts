// Resources the cases need (a contact, webhooks, calls, deliveries, campaigns), created through the API and cleaned up after.
import type { Session } from './session.js';
import type { WebhookTarget } from './webhook-target.js';

/** What the caller told the check about the deployment. */
export interface FixtureOptions {
  /** An agent of the key's org to place calls with; the first one the API lists when not given. */
  agentId?: string;
}

/** Why nothing addresses a webhook endpoint when the server refused the check's receiver (the run's note says more). */
export const NO_ENDPOINT = 'no webhook endpoint could be made (see the webhooks note above)';

/** The collections whose ids fill path parameters. */
export type Collection =
  'calls' | 'webhooks' | 'deliveries' | 'contacts' | 'agents' | 'events' | 'suppressions' | 'campaigns';

const NO_AGENT =
  'the org has no agent (the API cannot create agents: make one with `admin agent create` or pass --agent-id)';

const CALL_NUMBER = '+919812345678';

/**
 * The schedule of every campaign the check makes: a start a year ahead, so no contact of it is ever
 * dialed by the deployment while the run, or its leftovers, last.
 */
export function campaignSchedule(): Record<string, unknown> {
  const startsAt = new Date(Date.now() + 365 * 86_400_000);
  return {
    starts_at: startsAt.toISOString(),
    ends_at: new Date(startsAt.getTime() + 86_400_000).toISOString(),
    timezone: 'UTC',
    windows: [{ days: ['mon'], start: '10:00', end: '11:00' }],
  };
}

/** Creates resources on demand and remembers what to delete at the end. */
export class Fixtures {
  private readonly madeWebhooks: string[] = [];
  private readonly freshWebhooks: string[] = [];
  private sharedWebhook: Promise<string | undefined> | undefined;
  private sharedCall: Promise<string | undefined> | undefined;
  private sharedPhone: Promise<string | undefined> | undefined;
  private sharedContact: Promise<string | undefined> | undefined;
  private sharedAgent: Promise<string | undefined> | undefined;
  private contacts = 0;
  private suppressions = 0;
  private sharedEvent: Promise<string | undefined> | undefined;
  private sharedCampaign: Promise<string | undefined> | undefined;

  constructor(
    private readonly session: Session,
    readonly options: FixtureOptions,
    /** Where webhook endpoints point, or why none can be made. */
    readonly webhooks: WebhookTarget,
  ) {}

  private async create(
    operationId: string,
    body: unknown,
    expect: (data: Record<string, unknown>) => string,
  ): Promise<string | undefined> {
    const operation = this.session.operation(operationId);
    if (!operation) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: {}, query: {}, headers: {}, body },
      { kind: 'success' },
      'scenario',
      `fixture: ${operationId}`,
    );
    const data = (exchange.json as { data?: Record<string, unknown> } | undefined)?.data;
    return exchange.status < 300 && data ? expect(data) : undefined;
  }

  /** A webhook endpoint subscribed to contact.created; `fresh` makes a new one the caller may use up (see releaseFresh). */
  async webhook(fresh = false): Promise<string | undefined> {
    const url = this.webhooks.url;
    if (!url) return undefined;
    const make = async (into: string[]) => {
      const id = await this.create('createWebhook', { url, events: ['contact.created'] }, (data) => String(data.id));
      if (id) into.push(id);
      return id;
    };
    if (fresh) return make(this.freshWebhooks);
    return (this.sharedWebhook ??= make(this.madeWebhooks));
  }

  /** A call of the org; `fresh` places a new (still running) one. Without an agent, an existing call or undefined. */
  async call(fresh = false): Promise<string | undefined> {
    const place = async (agentId: string) =>
      this.create('createCall', { agent_id: agentId, to_e164: CALL_NUMBER }, (data) => String(data.id));
    const agentId = await this.agent();
    if (fresh) return agentId ? place(agentId) : undefined;
    return (this.sharedCall ??= agentId ? place(agentId) : this.firstListed('listCalls'));
  }

  /** Why no id of `collection` is available, for a note. */
  async unavailable(collection: Collection): Promise<string> {
    const webhookReason = this.webhooks.url ? undefined : NO_ENDPOINT;
    switch (collection) {
      case 'calls':
        return (await this.agent()) ? 'placing a call failed (see createCall)' : `no call to address: ${NO_AGENT}`;
      case 'webhooks':
        return webhookReason ?? 'registering an endpoint failed (see createWebhook)';
      case 'deliveries':
        return webhookReason ?? 'sending a test event failed (see testWebhook)';
      case 'contacts':
        return 'creating a contact failed (see upsertContact)';
      case 'agents':
        return `no agent to address: ${NO_AGENT}`;
      case 'events':
        return 'the org lists no event although a contact was created (see listEvents)';
      case 'suppressions':
        return 'adding a number to the do-not-call list failed (see createSuppression)';
      case 'campaigns':
        return (await this.agent())
          ? 'creating a campaign failed (see createCampaign)'
          : `no campaign to address: ${NO_AGENT}`;
    }
  }

  /** Why a request naming an agent cannot succeed, when the org has none. */
  readonly noAgent = NO_AGENT;

  /** The id of the first item the list operation `operationId` answers, if the spec has it and the list any. */
  private async firstListed(operationId: string): Promise<string | undefined> {
    const operation = this.session.operation(operationId);
    if (!operation) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: {}, query: { limit: 1 }, headers: {} },
      { kind: 'success' },
      'scenario',
      `fixture: ${operationId}`,
    );
    return (exchange.json as { data?: Array<{ id: string }> } | undefined)?.data?.[0]?.id;
  }

  /** A delivery to the webhook, made by sending it a test event. */
  async delivery(webhookId: string | undefined): Promise<string | undefined> {
    const operation = this.session.operation('testWebhook');
    if (!operation || !webhookId) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: { id: webhookId }, query: {}, headers: {} },
      { kind: 'success' },
      'scenario',
      'fixture: testWebhook',
    );
    return (exchange.json as { data?: { id?: string } } | undefined)?.data?.id;
  }

  /** The number of a contact that exists, so updates without consent_capture are valid. */
  async contactPhone(): Promise<string | undefined> {
    const phone = `+9199${String(Date.now()).slice(-8)}`;
    return (this.sharedPhone ??= this.create(
      'upsertContact',
      { phone_e164: phone, consent_capture: 'manual' },
      (data) => String(data.phone_e164),
    ));
  }

  /** The id of a contact of the org, made once by an upsert; `fresh` makes a new one. */
  async contactId(fresh = false): Promise<string | undefined> {
    this.contacts += 1;
    const phone = `+9198${String(Date.now() + this.contacts).slice(-8)}`;
    const make = () =>
      this.create('upsertContact', { phone_e164: phone, consent_capture: 'manual' }, (data) => String(data.id));
    return fresh ? make() : (this.sharedContact ??= make());
  }

  /**
   * A number newly put on the org's do-not-call list (never one the check's calls dial), for a removal or
   * the list's pages to use. Listed numbers the run did not remove are removed by its clean-up.
   */
  async suppression(): Promise<string | undefined> {
    this.suppressions += 1;
    const phone = `+9197${String(Date.now() + this.suppressions).slice(-8)}`;
    const made = await this.create(
      'createSuppression',
      { phone_e164: phone, reason: 'other', note: 'made by the conformance check' },
      (data) => String(data.phone_e164),
    );
    return made;
  }

  /**
   * The id of a campaign over the shared contact, starting a year ahead (never dialed); `fresh` makes a
   * new one the caller may pause, resume or cancel, over `contactIds` when given. Undefined without an agent.
   */
  async campaign(fresh = false, contactIds?: string[]): Promise<string | undefined> {
    const make = async () => {
      const agentId = await this.agent();
      const chosen = contactIds ?? [await this.contactId()];
      if (!agentId || chosen.some((id) => id === undefined)) return undefined;
      return this.create(
        'createCampaign',
        {
          name: 'made by the conformance check',
          agent_id: agentId,
          contacts: { contact_ids: chosen },
          schedule: campaignSchedule(),
        },
        (data) => String(data.id),
      );
    };
    return fresh ? make() : (this.sharedCampaign ??= make());
  }

  /** The id of an event of the org: the newest the API lists once the shared contact exists (its contact.created). */
  async event(): Promise<string | undefined> {
    return (this.sharedEvent ??= this.newestEvent());
  }

  private async newestEvent(): Promise<string | undefined> {
    const operation = this.session.operation('listEvents');
    if (!operation || !(await this.contactId())) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: {}, query: { limit: 1 }, headers: {} },
      { kind: 'success' },
      'scenario',
      'fixture: listEvents',
    );
    return (exchange.json as { data?: Array<{ id: string }> } | undefined)?.data?.[0]?.id;
  }

  /** An agent of the org: the one the caller named, or the first the API lists. */
  async agent(): Promise<string | undefined> {
    if (this.options.agentId) return this.options.agentId;
    return (this.sharedAgent ??= this.firstListed('listAgents'));
  }

  /** Remembers a webhook a case created, so it is deleted at the end. */
  adopt(webhookId: string): void {
    this.madeWebhooks.push(webhookId);
  }

  /** Deletes the fresh webhooks handed out so far (an org may hold only 20). */
  async releaseFresh(): Promise<void> {
    await this.remove(this.freshWebhooks.splice(0));
  }

  /** Deletes every webhook the run created. */
  async cleanup(): Promise<void> {
    await this.remove([...this.freshWebhooks.splice(0), ...this.madeWebhooks.splice(0)]);
  }

  private async remove(ids: string[]): Promise<void> {
    const operation = this.session.operation('deleteWebhook');
    if (!operation) return;
    for (const id of ids) {
      // A case may already have deleted it: any declared answer will do.
      await this.session.call(
        operation,
        { path: { id }, query: {}, headers: {} },
        { kind: 'declared' },
        'scenario',
        'cleanup: deleteWebhook',
      );
    }
  }
}
