// `deliveries`, `redeliver`, `replay`: a webhook endpoint's delivery log, and sending events again.
import { optionalInteger, optionalString, required, requiredUuid, UsageError, uuidArgument } from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

/** The deliveries command (a group of one). */
export const deliveryCommands: CommandGroup = {
  name: 'deliveries',
  summary: "deliveries: a webhook endpoint's delivery log",
  commands: [
    {
      name: 'deliveries',
      summary: "list a webhook endpoint's delivery attempts, newest first",
      synopsis: '--webhook WEBHOOK_ID [--status succeeded|failed] [--limit N]',
      flags: {
        webhook: { type: 'string', value: 'WEBHOOK_ID', help: 'the endpoint, whatever its org' },
        status: {
          type: 'string',
          value: 'succeeded|failed',
          help: 'only attempts that got a 2xx answer, or only the others',
        },
        limit: { type: 'string', value: 'N', help: 'how many attempts, 1 to 100 (default 100)' },
      },
      run: async ({ values }, database) => {
        const webhookId = requiredUuid(values, 'webhook', 'a webhook id');
        const limit = optionalInteger(values, 'limit') ?? 100;
        if (limit < 1 || limit > 100) throw new UsageError('--limit must be from 1 to 100');
        const status = optionalString(values, 'status');
        if (status !== undefined && status !== 'succeeded' && status !== 'failed') {
          throw new UsageError(`--status must be succeeded or failed, got "${status}"`);
        }
        const { listDeliveryLog } = await import('../../webhooks/service.js');
        const attempts = await listDeliveryLog(await database(), webhookId, {
          limit,
          ...(status ? { outcome: status } : {}),
        });
        const rows = attempts.map((attempt) => ({
          id: attempt.id,
          attempted_at: attempt.attempted_at.toISOString(),
          event: attempt.event,
          event_id: attempt.event_id,
          delivery_id: attempt.delivery_id,
          attempt: attempt.attempt,
          status_code: attempt.status_code,
          failure_kind: attempt.failure_kind,
          duration_ms: attempt.duration_ms,
          response_excerpt: attempt.response_excerpt,
        }));
        const human = rows.length
          ? rows
              .map(
                (row) =>
                  `${row.attempted_at}  attempt ${row.id}  delivery ${row.delivery_id}  ${row.event.padEnd(15)} #${row.attempt}  ${String(row.status_code ?? row.failure_kind).padEnd(18)} ${String(row.duration_ms).padStart(5)} ms  ${(row.response_excerpt ?? '').replace(/\s+/g, ' ').slice(0, 60)}`,
              )
              .join('\n')
          : 'No delivery attempts yet.';
        return { human, json: rows };
      },
    },
  ],
};

/** Whether `text` starts with a day the calendar has (2026-02-30 is not one), then `T`. */
function isCalendarDateTime(text: string): boolean {
  const match = /^(\d{4})-(\d\d)-(\d\d)T/.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The redeliver command (a group of one). */
export const redeliverCommands: CommandGroup = {
  name: 'redeliver',
  summary: 'redeliver: one delivery sent again',
  commands: [
    {
      name: 'redeliver',
      summary: "queue one delivery's event to its endpoint again (or show the one already pending)",
      synopsis: 'DELIVERY_ID',
      flags: {},
      args: ['DELIVERY_ID'],
      run: async ({ args: [id] }, database) => {
        const deliveryId = uuidArgument(id, 'DELIVERY_ID', 'a delivery id');
        const [{ redeliverAny }, { CLI_ACTOR }] = await Promise.all([
          import('../../webhooks/operator.js'),
          import('../../audit/service.js'),
        ]);
        const { id: queuedId, queued } = await redeliverAny(await database(), deliveryId, new Date(), CLI_ACTOR);
        return {
          human: queued
            ? `Queued delivery ${queuedId}; the worker sends it now.`
            : `Delivery ${queuedId} of the same event is already pending; nothing new was queued.`,
          json: { id: queuedId, queued },
        };
      },
    },
  ],
};

/** The replay command (a group of one). */
export const replayCommands: CommandGroup = {
  name: 'replay',
  summary: "replay: an endpoint's failed deliveries since a time, sent again",
  commands: [
    {
      name: 'replay',
      summary: 'queue again every event an endpoint failed to get since a time',
      notes:
        'Each event whose delivery failed or was abandoned since --since is queued once, oldest first, at most --limit of them; an event whose delivery is waiting for a retry is made due now instead (as "Retry now" in the dashboard), and one whose delivery is already due is left alone. The endpoint must be on.',
      synopsis: '--webhook WEBHOOK_ID --since TIME [--limit N] [--dry-run]',
      flags: {
        webhook: { type: 'string', value: 'WEBHOOK_ID', help: 'the endpoint, whatever its org' },
        since: { type: 'string', value: 'TIME', help: 'an ISO 8601 time, e.g. 2026-11-26T08:00:00Z' },
        limit: { type: 'string', value: 'N', help: 'at most this many events, 1 to 1000 (default 100)' },
        'dry-run': { type: 'boolean', help: 'list the events that would be queued; queue nothing' },
      },
      run: async ({ values }, database) => {
        const webhookId = requiredUuid(values, 'webhook', 'a webhook id');
        const sinceText = required(values, 'since');
        const since = new Date(sinceText);
        if (!isCalendarDateTime(sinceText) || Number.isNaN(since.getTime())) {
          throw new UsageError(`--since must be an ISO 8601 time such as 2026-11-26T08:00:00Z, got "${sinceText}"`);
        }
        const [{ MAX_REPLAY, replayDeliveries }, { CLI_ACTOR }] = await Promise.all([
          import('../../webhooks/operator.js'),
          import('../../audit/service.js'),
        ]);
        const limit = optionalInteger(values, 'limit') ?? 100;
        if (limit < 1 || limit > MAX_REPLAY) throw new UsageError(`--limit must be from 1 to ${MAX_REPLAY}`);
        const dryRun = values['dry-run'] === true;
        const report = await replayDeliveries(await database(), webhookId, {
          since,
          limit,
          now: new Date(),
          dryRun,
          actor: CLI_ACTOR,
        });
        const rows = [
          ...report.queued.map((event) => [event, dryRun ? 'would queue' : 'queued']),
          ...report.madeDue.map((event) => [event, 'made due now']),
          ...report.alreadyPending.map((event) => [event, 'already due']),
        ];
        const summary = dryRun
          ? `${report.queued.length} event(s) would be queued or made due now.`
          : `${report.queued.length} event(s) queued, ${report.madeDue.length} made due now, ${report.alreadyPending.length} already due.`;
        return {
          human: `${table(['EVENT', 'OUTCOME'], rows, 'No failed or abandoned delivery since then.')}\n${summary}`,
          json: {
            dry_run: dryRun,
            queued: report.queued,
            made_due: report.madeDue,
            already_pending: report.alreadyPending,
          },
        };
      },
    },
  ],
};
