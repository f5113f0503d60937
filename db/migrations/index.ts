// The ordered list of migrations; each entry is frozen once released. Add new ones at the end.
import type { Migration } from 'kysely/migration';
import * as foundation from './2026-11-21-001-foundation.js';
import * as contacts from './2026-11-21-004-contacts.js';
import * as calls from './2026-11-21-002-calls.js';
import * as webhooks from './2026-11-21-003-webhooks.js';
import * as rateLimitAsyncCommit from './2026-11-21-005-rate-limit-async-commit.js';
import * as rateLimitBatches from './2026-11-21-006-rate-limit-batches.js';
import * as recordAttemptFunction from './2026-11-21-007-record-attempt-function.js';
import * as schemaFunctions from './2026-11-25-008-schema-functions.js';
import * as deliveryLeases from './2026-11-25-009-delivery-leases.js';
import * as exactWindows from './2026-11-25-010-exact-windows.js';
import * as historyAndTracing from './2026-11-25-011-history-and-tracing.js';
import * as dueDeliveriesByEndpoint from './2026-11-25-012-due-deliveries-by-endpoint.js';
import * as dashboard from './2026-11-26-013-dashboard.js';
import * as authFailureAllowances from './2026-11-26-020-auth-failure-allowances.js';
import * as redeliveries from './2026-11-26-021-redeliveries.js';
import * as attemptLogPositions from './2026-11-26-022-attempt-log-positions.js';
import * as dropDueIndex from './2026-11-26-023-drop-due-index.js';
import * as dashboardFormUses from './2026-11-28-024-dashboard-form-uses.js';
import * as memberEmailPerOrg from './2026-11-29-025-member-email-per-org.js';
import * as contactImports from './2026-11-29-026-contact-imports.js';
import * as droppedDeliveries from './2026-11-29-027-dropped-deliveries.js';
import * as voiceProviders from './2026-11-29-028-voice-providers.js';
import * as testMode from './2026-11-29-029-test-mode.js';
import * as suppressions from './2026-11-29-030-suppressions.js';
import * as balanceLow from './2026-11-29-031-balance-low.js';
import * as concurrentCallCap from './2026-11-29-032-concurrent-call-cap.js';
import * as campaigns from './2026-11-29-033-campaigns.js';
import * as campaignRequests from './2026-11-29-034-campaign-requests.js';
import * as callsByCampaign from './2026-11-29-035-calls-by-campaign.js';
import * as campaignPreviousCall from './2026-12-03-036-campaign-previous-call.js';

export const migrations: Record<string, Migration> = {
  '2026-11-21-001-foundation': foundation,
  '2026-11-21-004-contacts': contacts,
  '2026-11-21-002-calls': calls,
  '2026-11-21-003-webhooks': webhooks,
  '2026-11-21-005-rate-limit-async-commit': rateLimitAsyncCommit,
  '2026-11-21-006-rate-limit-batches': rateLimitBatches,
  '2026-11-21-007-record-attempt-function': recordAttemptFunction,
  '2026-11-25-008-schema-functions': schemaFunctions,
  '2026-11-25-009-delivery-leases': deliveryLeases,
  '2026-11-25-010-exact-windows': exactWindows,
  '2026-11-25-011-history-and-tracing': historyAndTracing,
  '2026-11-25-012-due-deliveries-by-endpoint': dueDeliveriesByEndpoint,
  '2026-11-26-013-dashboard': dashboard,
  '2026-11-26-020-auth-failure-allowances': authFailureAllowances,
  '2026-11-26-021-redeliveries': redeliveries,
  '2026-11-26-022-attempt-log-positions': attemptLogPositions,
  '2026-11-26-023-drop-due-index': dropDueIndex,
  '2026-11-28-024-dashboard-form-uses': dashboardFormUses,
  '2026-11-29-025-member-email-per-org': memberEmailPerOrg,
  '2026-11-29-026-contact-imports': contactImports,
  '2026-11-29-027-dropped-deliveries': droppedDeliveries,
  '2026-11-29-028-voice-providers': voiceProviders,
  '2026-11-29-029-test-mode': testMode,
  '2026-11-29-030-suppressions': suppressions,
  '2026-11-29-031-balance-low': balanceLow,
  '2026-11-29-032-concurrent-call-cap': concurrentCallCap,
  '2026-11-29-033-campaigns': campaigns,
  '2026-11-29-034-campaign-requests': campaignRequests,
  '2026-11-29-035-calls-by-campaign': callsByCampaign,
  '2026-12-03-036-campaign-previous-call': campaignPreviousCall,
};
