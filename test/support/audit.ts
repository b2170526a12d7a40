/**
 * The ledger audit as a test oracle. Every end-to-end suite ends with it:
 *
 *   import { auditAfterAll } from '../support/audit';
 *   auditAfterAll();            // at the top level of the file
 *
 * It scans this file's own table (test/support/env.ts) once all tests have run and fails the
 * suite, naming the difference, when the money does not add up. While the file's stack and its
 * local chain are up, it also reconciles the stack's wallets with the ledger, transfer by transfer
 * (functions/audit/chain-checks.ts): a drained wallet or a double credit fails it. Without a chain
 * (none configured, or the stack already stopped) it audits the table alone.
 */
import { formatAuditReport, type LedgerAuditReport, runLedgerAudit } from '../../functions/audit/ledger-audit';
import { configuredWallets } from '../../functions/audit/wallet-audit';
import { config } from '../../functions/config';
import { solanaRpc } from '../../functions/rails/solana.json-rpc';

/** Whether the configured chain answers (a stopped stack's does not). */
async function chainUp(): Promise<boolean> {
  const url = config().SOLANA_RPC_URL;
  if (!url || !configuredWallets()) return false;
  try {
    await solanaRpc(url, 'getHealth', [], { timeoutMs: 2_000 });
    return true;
  } catch {
    return false;
  }
}

/** The audit, with the wallets when the chain is up; `operatorWallets`: where sweeps may go. */
export async function ledgerAudit(opts: { operatorWallets?: string[] } = {}): Promise<LedgerAuditReport> {
  return runLedgerAudit({ wallets: (await chainUp()) ? { operatorWallets: opts.operatorWallets ?? [] } : false });
}

/** Runs the audit now; throws with the full report when the invariant does not hold. */
export async function expectLedgerBalanced(opts: { operatorWallets?: string[] } = {}): Promise<LedgerAuditReport> {
  const report = await ledgerAudit(opts);
  if (!report.ok) throw new Error(formatAuditReport(report));
  return report;
}

/** Registers an `afterAll` that audits the file's table after its last test. */
export function auditAfterAll(): void {
  afterAll(async () => {
    await expectLedgerBalanced();
  });
}
