// `deliveries`: a webhook endpoint's delivery log.
import { optionalInteger, requiredUuid, UsageError } from '../args.js';
import type { CommandGroup } from './command.js';

/** The deliveries command (a group of one). */
export const deliveryCommands: CommandGroup = {
  name: 'deliveries',
  summary: "deliveries: a webhook endpoint's delivery log",
  commands: [
    {
      name: 'deliveries',
      summary: "list a webhook endpoint's delivery attempts, newest first",
      synopsis: '--webhook WEBHOOK_ID [--limit N]',
      flags: {
        webhook: { type: 'string', value: 'WEBHOOK_ID', help: 'the endpoint, whatever its org' },
        limit: { type: 'string', value: 'N', help: 'how many attempts, 1 to 100 (default 100)' },
      },
      run: async ({ values }, database) => {
        const webhookId = requiredUuid(values, 'webhook', 'a webhook id');
        const limit = optionalInteger(values, 'limit') ?? 100;
        if (limit < 1 || limit > 100) throw new UsageError('--limit must be from 1 to 100');
        const { listDeliveryLog } = await import('../../webhooks/service.js');
        const attempts = await listDeliveryLog(await database(), webhookId, { limit });
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
