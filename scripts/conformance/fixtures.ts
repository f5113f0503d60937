// Resources the cases need (a contact, webhooks, calls, deliveries), created through the API and cleaned up after.
import type { Session } from './session.js';

/** What the caller told the check about the deployment. */
export interface FixtureOptions {
  /** An agent of the key's org; without it no call can be placed (the API cannot create agents). */
  agentId?: string;
  /** An https URL the deployment accepts for webhook endpoints. */
  webhookUrl: string;
}

const CALL_NUMBER = '+919812345678';

/** Creates resources on demand and remembers what to delete at the end. */
export class Fixtures {
  private readonly webhooks: string[] = [];
  private readonly freshWebhooks: string[] = [];
  private sharedWebhook: Promise<string | undefined> | undefined;
  private sharedCall: Promise<string | undefined> | undefined;
  private sharedPhone: Promise<string | undefined> | undefined;
  private sharedContact: Promise<string | undefined> | undefined;
  private sharedAgent: Promise<string | undefined> | undefined;

  constructor(
    private readonly session: Session,
    readonly options: FixtureOptions,
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
    const make = async (into: string[]) => {
      const id = await this.create(
        'createWebhook',
        { url: this.options.webhookUrl, events: ['contact.created'] },
        (data) => String(data.id),
      );
      if (id) into.push(id);
      return id;
    };
    if (fresh) return make(this.freshWebhooks);
    return (this.sharedWebhook ??= make(this.webhooks));
  }

  /** A call of the org; `fresh` places a new (still running) one. Undefined without an agent. */
  async call(fresh = false): Promise<string | undefined> {
    const make = async () =>
      this.options.agentId
        ? this.create('createCall', { agent_id: this.options.agentId, to_e164: CALL_NUMBER }, (data) => String(data.id))
        : this.existingCall();
    if (fresh) return this.options.agentId ? make() : undefined;
    return (this.sharedCall ??= make());
  }

  private async existingCall(): Promise<string | undefined> {
    const operation = this.session.operation('listCalls');
    if (!operation) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: {}, query: { limit: 1 }, headers: {} },
      { kind: 'success' },
      'scenario',
      'fixture: listCalls',
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

  /** The id of a contact of the org, made once by an upsert. */
  async contactId(): Promise<string | undefined> {
    const phone = `+9198${String(Date.now()).slice(-8)}`;
    return (this.sharedContact ??= this.create(
      'upsertContact',
      { phone_e164: phone, consent_capture: 'manual' },
      (data) => String(data.id),
    ));
  }

  /** An agent of the org: the one the caller named, or the first the API lists. */
  async agent(): Promise<string | undefined> {
    if (this.options.agentId) return this.options.agentId;
    return (this.sharedAgent ??= this.firstAgent());
  }

  private async firstAgent(): Promise<string | undefined> {
    const operation = this.session.operation('listAgents');
    if (!operation) return undefined;
    const exchange = await this.session.call(
      operation,
      { path: {}, query: { limit: 1 }, headers: {} },
      { kind: 'success' },
      'scenario',
      'fixture: listAgents',
    );
    return (exchange.json as { data?: Array<{ id: string }> } | undefined)?.data?.[0]?.id;
  }

  /** Remembers a webhook a case created, so it is deleted at the end. */
  adopt(webhookId: string): void {
    this.webhooks.push(webhookId);
  }

  /** Deletes the fresh webhooks handed out so far (an org may hold only 20). */
  async releaseFresh(): Promise<void> {
    await this.remove(this.freshWebhooks.splice(0));
  }

  /** Deletes every webhook the run created. */
  async cleanup(): Promise<void> {
    await this.remove([...this.freshWebhooks.splice(0), ...this.webhooks.splice(0)]);
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
