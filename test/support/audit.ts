/**
 * The ledger audit as a test oracle. Every end-to-end suite ends with it:
 *
 *   import { auditAfterAll } from '../support/audit';
 *   auditAfterAll();            // at the top level of the file
 *
 * It scans this file's own table (test/support/env.ts) once all tests have run and fails the
 * suite, naming the difference, when the money does not add up.
 */
import { formatAuditReport, type LedgerAuditReport, runLedgerAudit } from '../../functions/audit/ledger-audit';

/** Runs the audit now; throws with the full report when the invariant does not hold. */
export async function expectLedgerBalanced(): Promise<LedgerAuditReport> {
  const report = await runLedgerAudit();
  if (!report.ok) throw new Error(formatAuditReport(report));
  return report;
}

/** Registers an `afterAll` that audits the file's table after its last test. */
export function auditAfterAll(): void {
  afterAll(async () => {
    await expectLedgerBalanced();
  });
}
