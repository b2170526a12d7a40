/**
 * The ledger invariant. Money enters the service only as credits to users (admin credits, and
 * completed top-ups, each written with its CREDITS# record in the transaction that completes it:
 * topup-checks.ts ties the two), and every movement after that is a transfer inside one DynamoDB
 * transaction, so per currency:
 *
 *   credited to users (CREDITS# records)
 *     = user balances
 *     + agent balances (every AGENTBAL shard)
 *     + held amounts (PENDING charges: debited from the user, not yet earned by the agent)
 *     + payouts paid out (net of COMPLETED payouts)
 *     + platform fees (fee and account-creation fee of COMPLETED payouts)
 *     + payouts in flight (gross of PENDING, PROCESSING and HELD payouts; FAILED ones were refunded)
 *     + reversed (PayPal took back a credited top-up: debited from the balance, or paid of the
 *       resulting debt by a later top-up; REVERSALS# records and credits' `owedRepaid`)
 *
 * Cross-checks that localise a break:
 *   - per agent and currency: SUCCESS charges less their refunds = shard balances + gross of its
 *     non-FAILED payouts;
 *   - per user and currency: credits − (SUCCESS charges less refunds) − PENDING charges −
 *     reversed = the user's balance; the debt on the user's item (`owed<currency>`) = reversals'
 *     `owed` − credits' `owedRepaid`;
 *   - per charge (the lifecycle): refunds ≤ the amount and only on SUCCESS; a captured hold took
 *     more than zero and at most what was authorized; a hold that did not succeed kept its whole
 *     authorized amount;
 *   - per user and currency: held on the user's item (`heldUSD`, `heldUSDC`) = the user's PENDING
 *     charges (the total above counts held money once, from the charges; this ties the items to it);
 *   - every payout: net = gross − fee − account-creation fee > 0 (a creation fee only on USDC
 *     payouts), its fee 3% of gross (half up) or, counted over the agent's withdrawals, within a
 *     minor unit of it; per agent and currency, the fee basis holds the gross and fees of the
 *     counted payouts not refunded, and those fees are exactly 3% (half up) of that gross, so no
 *     split undercut it (core/fees.ts); no balance is negative;
 *     an agent has at most one payout in flight, and its payout lock exists exactly while one is,
 *     naming that payout;
 *   - per payer created since the statement (`statementFrom`) and currency: their statement
 *     entries sum to their balance (docs/statement.md);
 *   - a refund of an x402 payment (DESIGN §28) is a payout with no fee and no lock (its net is its
 *     gross, paid to the payer and reconciled on chain like any USDC payout); per payment, its
 *     refunds that were not FAILED add up to its `refunded`, which never passes the payment;
 *   - per grant (docs/grants.md): `spent` = its SUCCESS charges + its open holds, and its UTC day's
 *     and month's counters the same over the charges of that period (refunds do not give back to a
 *     grant: a refunded charge stays spent); every grant charge is its grant's agent's and currency's.
 *
 * Money that moves on chain (chain-checks.ts): no transfer is credited by two rails (the table
 * alone), and, given the chain (`runLedgerAudit({ wallets })`: `npm run audit` and the tests), the
 * wallets' USDC is reconciled with the ledger transfer by transfer — every outflow a payout, every
 * on-chain credit an inflow of its amount — so a drained wallet or a double credit fails the audit.
 *
 * The checks are pure functions over typed rows (ledger-checks.ts, chain-checks.ts); `auditRows`
 * runs them all and states the verdict, `auditLedger` does the same from raw scanned items (tests,
 * the benchmark), and `runLedgerAudit` scans the table (and reads the chain) first.
 */
import { CURRENCIES, type Currency, formatAmount, type Minor } from '../core/money';
import { type LedgerItems, scanLedgerRows } from '../store/audit/audit.repository';
import { type LedgerRows, toLedgerRows } from '../store/audit/ledger-rows.mapper';
import { scanTopupRows } from '../store/topups/topup-audit.repository';
import {
  type AgentMismatch,
  agentIdsOf,
  agentMismatches,
  describeAgentMismatch,
  describeHeldMismatch,
  describeUserMismatch,
  type HeldMismatch,
  heldMismatches,
  negativeBalanceProblems,
  owedProblems,
  statementProblems,
  type UserMismatch,
  userMismatches,
} from './balance-checks';
import { chainCreditProblems, reconcileWallets, type WalletChain, type WalletReport } from './chain-checks';
import { grantProblems, lifecycleProblems, x402Problems } from './charge-checks';
import { type CurrencyTotals, currencyProblems, currencyTotals } from './ledger-checks';
import { feeBasisProblems, payoutLockProblems, payoutSplitProblems, x402RefundProblems } from './payout-checks';
import { tabProblems } from './tab-checks';
import { topupProblems } from './topup-checks';
import { readWalletChain, type WalletAuditOptions } from './wallet-audit';

export type { AgentMismatch, HeldMismatch, UserMismatch } from './balance-checks';
export type { CurrencyTotals } from './ledger-checks';

export interface LedgerAuditReport {
  ok: boolean;
  currencies: Record<Currency, CurrencyTotals>;
  agentMismatches: AgentMismatch[];
  userMismatches: UserMismatch[];
  /** Users whose held money on their item differs from their PENDING charges. */
  heldMismatches: HeldMismatch[];
  /** Every way the ledger fails to hold, one sentence each (empty when ok). */
  problems: string[];
  counts: { users: number; agents: number; shards: number; credits: number; charges: number; payouts: number; scanned: number };
  /** The grants whose counters were checked against their charges, and what broke (also in `problems`). */
  grants: { checked: number; problems: string[] };
  /** The wallets reconciled with the ledger, when the chain was read (its problems are in `problems` too). */
  wallets?: WalletReport;
}

/** Checks every invariant over rows already read and parsed, and the wallets when `chain` is given (see `runLedgerAudit`). */
export function auditRows(rows: LedgerRows, chain?: WalletChain): LedgerAuditReport {
  const currencies = currencyTotals(rows);
  // Money that could not be read still belongs to an agent: check that agent too.
  const agentIds = [
    ...new Set([...agentIdsOf(rows), ...rows.unreadable.flatMap((u) => (u.agentId === undefined ? [] : [u.agentId]))]),
  ].sort();
  const agents = agentMismatches(rows, agentIds);
  const users = userMismatches(rows);
  const held = heldMismatches(rows);
  const grants = grantProblems(rows);
  const problems = [
    ...rows.unreadable.map((u) => u.problem),
    ...negativeBalanceProblems(rows),
    ...payoutSplitProblems(rows.payouts),
    ...payoutLockProblems(rows.payouts, rows.locks),
    ...feeBasisProblems(rows.payouts, rows.feeBases),
    ...x402RefundProblems(rows.payouts, rows.x402Payments),
    ...lifecycleProblems(rows.charges),
    ...currencyProblems(currencies),
    ...agents.map(describeAgentMismatch),
    ...users.map(describeUserMismatch),
    ...held.map(describeHeldMismatch),
    ...owedProblems(rows),
    ...x402Problems(rows),
    ...chainCreditProblems(rows),
    ...grants,
    ...tabProblems(rows),
    ...statementProblems(rows),
  ];
  const wallets = chain ? reconcileWallets(chain, rows) : undefined;
  if (wallets) problems.push(...wallets.problems);
  return {
    ok: problems.length === 0,
    currencies,
    agentMismatches: agents,
    userMismatches: users,
    heldMismatches: held,
    problems,
    // Same key order as before the split: `npm run audit -- --json` output does not change.
    counts: {
      users: rows.counts.users,
      agents: agentIds.length,
      shards: rows.counts.shards,
      credits: rows.counts.credits,
      charges: rows.counts.charges,
      payouts: rows.counts.payouts,
      scanned: rows.scanned,
    },
    grants: { checked: rows.grants.length, problems: grants },
    ...(wallets ? { wallets } : {}),
  };
}

/** Checks the invariant over raw items as `scanLedgerItems` returns them. */
export function auditLedger(items: Omit<LedgerItems, 'scanned' | 'pages'> & { scanned?: number }): LedgerAuditReport {
  return auditRows(toLedgerRows(items));
}

/**
 * Scans the configured table and checks the invariant; with `wallets`, also reads the configured
 * wallets' history from the chain and reconciles it with the ledger (chain-checks.ts). Run it when
 * no money is moving.
 */
export async function runLedgerAudit(opts: { segments?: number; wallets?: WalletAuditOptions | false } = {}): Promise<LedgerAuditReport> {
  // Top-ups: every completed one has exactly one credit, and no credit lacks its top-up. Its own
  // (filtered) scan, run alongside the ledger's (and the chain's reads) so the audit takes no longer.
  const [rows, topupRows, chain] = await Promise.all([
    scanLedgerRows(opts),
    scanTopupRows(),
    opts.wallets ? readWalletChain(opts.wallets) : undefined,
  ]);
  const report = auditRows(rows, chain);
  const topups = topupProblems(topupRows);
  return topups.length === 0 ? report : { ...report, ok: false, problems: [...report.problems, ...topups] };
}

/** A human-readable report: the per-currency equation, then every problem. */
export function formatAuditReport(report: LedgerAuditReport): string {
  const lines: string[] = [];
  const c = report.counts;
  lines.push(
    `ledger audit: ${report.ok ? 'HOLDS' : 'DOES NOT HOLD'} (${c.scanned} items: ${c.users} users, ${c.agents} agents, ` +
      `${c.shards} balance shards, ${c.credits} credits, ${c.charges} charges, ${c.payouts} payouts)`,
  );
  for (const cur of CURRENCIES) {
    const t = report.currencies[cur];
    const f = (m: Minor) => formatAmount(m, cur);
    lines.push(
      `  ${cur.padEnd(4)} credited ${f(t.credited)}${t.x402Received === undefined ? '' : ` + x402 ${f(t.x402Received)}`} = ` +
        `users ${f(t.userBalances)} + agents ${f(t.agentBalances)} + held ${f(t.held)} ` +
        `+ paid net ${f(t.payoutsPaidNet)} + fees ${f(t.platformFees)} + in flight ${f(t.inFlightGross)}` +
        (t.reversed === 0 ? '' : ` + reversed ${f(t.reversed)}`) +
        (t.difference === 0 ? '  ✓' : `  ✗ difference ${f(t.difference)}`),
    );
  }
  const g = report.grants;
  lines.push(
    `  grants ${g.checked}: spent = SUCCESS charges + open holds (refunds stay spent), day and month counters alike` +
      (g.problems.length === 0 ? '  ✓' : `  ✗ ${g.problems.length} below`),
  );
  const w = report.wallets;
  if (w) {
    const t = w.totals;
    const f = (m: Minor) => formatAmount(m, 'USDC');
    const walletProblems = w.problems.length;
    lines.push(
      `  wallets USDC on chain ${f(t.onChain)} = uncredited in ${f(t.funding)} + top-ups ${f(t.topups)} + x402 ${f(t.x402)} ` +
        `+ x402 pending ${f(t.x402Pending)} + unmatched ${f(t.unmatched)} − payouts ${f(t.payouts)} − to operator ${f(t.toOperator)}` +
        (walletProblems === 0 && t.difference === 0 ? '  ✓' : `  ✗ ${walletProblems} below`) +
        ` (${w.wallets.map((x) => `${x.roles.join(' and ')} ${x.address}: ${f(x.balance)}, ${x.transactions} transactions`).join('; ')})`,
    );
    for (const u of w.uncredited) {
      lines.push(`  · ${u.signature} brought ${f(u.amount)} USDC that credits no one (funding, or not yet seen by the watcher)`);
    }
  }
  for (const p of report.problems) lines.push(`  ✗ ${p}`);
  return lines.join('\n');
}
