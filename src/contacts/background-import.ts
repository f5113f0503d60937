// A CSV import the dashboard starts and leaves running: it takes one of this process's import slots
// (CONTACT_IMPORTS_PER_PROCESS; refused at once with too_many_requests when none is free) and the org's
// one running import (refused with invalid_state), then runs while its page reports on it.
import type { AppDeps } from '../app-deps.js';
import type { AuditEntry } from '../audit/service.js';
import { DomainError } from '../errors.js';
import { checkImportFile, refuseIfRunning, startImport, type ImportSummary } from './csv-import.js';
import { IMPORT_RETRY_AFTER_S } from './policy.js';

/** A started background import: its id (its page) and its end. */
export interface BackgroundImport {
  id: string;
  /** Settles when the import ends; rejects when it failed (already logged and recorded). */
  done: Promise<ImportSummary>;
}

function serverBusy(limit: number): DomainError {
  return new DomainError(
    'too_many_requests',
    `This server is already running ${limit} contact imports, the most it runs at once; try again in ${IMPORT_RETRY_AFTER_S} seconds.`,
    { headers: { 'Retry-After': String(IMPORT_RETRY_AFTER_S) } },
  );
}

/**
 * Checks the file and starts importing it into the org in the background; `cleanup` runs once the
 * import has ended (or did not start). Throws ImportFileError for a file that cannot be imported,
 * too_many_requests when this process runs as many imports as it may, invalid_state when the org
 * already has one running.
 */
export async function startBackgroundImport(
  deps: AppDeps,
  orgId: string,
  file: string,
  options: { audit: (importId: string) => AuditEntry; cleanup: () => Promise<void> },
): Promise<BackgroundImport> {
  const { imports, config } = deps;
  // The cheap refusals first, so an excess import is refused at once; the file check then runs in
  // one of this process's few slots.
  if (!imports.tryAcquire(config.contactImportsPerProcess)) {
    deps.metrics.contactImports.inc({ outcome: 'refused' });
    deps.logger.info({ org: orgId }, 'contact import refused: this process runs as many as it may');
    await options.cleanup();
    throw serverBusy(config.contactImportsPerProcess);
  }
  let started;
  try {
    await refuseIfRunning(deps, orgId);
    await checkImportFile(deps, orgId, file);
    started = await startImport(deps, orgId, file, {
      source: 'dashboard',
      audit: options.audit,
      signal: imports.stopping,
    });
  } catch (error) {
    imports.release();
    await options.cleanup();
    throw error;
  }
  const done = started.run().finally(options.cleanup);
  imports.track(done);
  return { id: started.id, done };
}
