/**
 * The ledger invariant. Money enters the service only as admin credits to users, and every
 * movement after that is a transfer inside one DynamoDB transaction, so per currency:
 *
 *   credited to users (CREDITS# records)
 *     = user balances
 *     + agent balances (every AGENTBAL shard)
 *     + held amounts (PENDING charges: debited from the user, not yet earned by the agent)
 *     + payouts paid out (net of COMPLETED payouts)
 *     + platform fees (fee of COMPLETED payouts)
 *     + payouts in flight (gross of PENDING and PROCESSING payouts; FAILED ones were refunded)
 *
 * Cross-checks that localise a break:
 *   - per agent and currency: SUCCESS charges = shard balances + gross of its non-FAILED payouts;
 *   - per user and currency: credits − SUCCESS and PENDING charges = the user's balance;
 *   - every payout: fee = 3% of gross (half up), net = gross − fee; no balance is negative;
 *     an agent has at most one payout in flight, and its payout lock exists exactly while one is,
 *     naming that payout.
 *
 * `auditLedger` is pure (tests feed it items); `runLedgerAudit` scans the table first.
 */
import { platformFee } from '../core/fees';
import { CURRENCIES, type Currency, formatAmount, isCurrency, type Minor } from '../core/money';
import { type LedgerItems, scanLedgerItems } from '../store/audit.repository';

type Item = Record<string, unknown>;

export interface CurrencyTotals {
  /** Money in: the sum of CREDITS# records. */
  credited: Minor;
  userBalances: Minor;
  agentBalances: Minor;
  held: Minor;
  payoutsPaidNet: Minor;
  platformFees: Minor;
  inFlightGross: Minor;
  /** userBalances + agentBalances + held + payoutsPaidNet + platformFees + inFlightGross. */
  accountedFor: Minor;
  /** credited − accountedFor: zero when the ledger balances. */
  difference: Minor;
}

export interface AgentMismatch {
  agentId: string;
  currency: Currency;
  successCharges: Minor;
  shardBalance: Minor;
  payoutsGross: Minor;
  /** successCharges − (shardBalance + payoutsGross). */
  difference: Minor;
}

export interface UserMismatch {
  userId: string;
  currency: Currency;
  credited: Minor;
  charged: Minor;
  balance: Minor;
  /** credited − charged − balance. */
  difference: Minor;
}

export interface LedgerAuditReport {
  ok: boolean;
  currencies: Record<Currency, CurrencyTotals>;
  agentMismatches: AgentMismatch[];
  userMismatches: UserMismatch[];
  /** Every way the ledger fails to hold, one sentence each (empty when ok). */
  problems: string[];
  counts: { users: number; agents: number; shards: number; credits: number; charges: number; payouts: number; scanned: number };
}

const PAYOUT_STATUSES = new Set(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']);
const CHARGE_STATUSES = new Set(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']);

const zero = (): Record<Currency, Minor> => ({ USD: 0, USDC: 0 });

/** A nested per-id, per-currency accumulator. */
class Sums {
  private readonly byId = new Map<string, Record<Currency, Minor>>();
  add(id: string, currency: Currency, amount: Minor): void {
    let row = this.byId.get(id);
    if (!row) {
      row = zero();
      this.byId.set(id, row);
    }
    row[currency] += amount;
  }
  get(id: string, currency: Currency): Minor {
    return this.byId.get(id)?.[currency] ?? 0;
  }
  ids(): string[] {
    return [...this.byId.keys()];
  }
}

/** Checks the invariant over items already read (see `runLedgerAudit`). */
export function auditLedger(items: Omit<LedgerItems, 'scanned' | 'pages'> & { scanned?: number }): LedgerAuditReport {
  const problems: string[] = [];
  const totals = Object.fromEntries(
    CURRENCIES.map((c) => [
      c,
      {
        credited: 0,
        userBalances: 0,
        agentBalances: 0,
        held: 0,
        payoutsPaidNet: 0,
        platformFees: 0,
        inFlightGross: 0,
        accountedFor: 0,
        difference: 0,
      },
    ]),
  ) as Record<Currency, CurrencyTotals>;

  /** An exact, non-negative minor amount, or a problem named after `where`. */
  const minor = (value: unknown, where: string, allowZero = true): Minor | undefined => {
    if (typeof value === 'number' && Number.isSafeInteger(value) && (value > 0 || (allowZero && value === 0))) return value;
    if (value === undefined && allowZero) return 0;
    problems.push(`${where}: ${JSON.stringify(value)} is not a valid amount in minor units`);
    return undefined;
  };
  const currencyOf = (item: Item, where: string): Currency | undefined => {
    if (isCurrency(item.currency)) return item.currency;
    problems.push(`${where}: unknown currency ${JSON.stringify(item.currency)}`);
    return undefined;
  };
  const afterHash = (pk: unknown): string => String(pk ?? '').slice(String(pk ?? '').indexOf('#') + 1);

  const userCredits = new Sums();
  const userCharged = new Sums();
  const userBalance = new Sums();
  const agentCharges = new Sums();
  const agentShards = new Sums();
  const agentPayouts = new Sums();
  const agents = new Set<string>();

  for (const item of items.credits) {
    const where = `credit ${String(item.PK)}/${String(item.SK)}`;
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, where, false);
    if (!currency || amount === undefined) continue;
    totals[currency].credited += amount;
    userCredits.add(typeof item.userId === 'string' ? item.userId : afterHash(item.PK), currency, amount);
  }

  for (const item of items.users) {
    const userId = typeof item.userId === 'string' ? item.userId : afterHash(item.PK);
    for (const c of CURRENCIES) {
      const value = item[c];
      if (typeof value === 'number' && value < 0) problems.push(`user ${userId}: ${c} balance is negative (${value})`);
      const amount = typeof value === 'number' && Number.isSafeInteger(value) ? value : minor(value, `user ${userId} ${c}`);
      if (amount === undefined) continue;
      totals[c].userBalances += amount;
      userBalance.add(userId, c, amount);
    }
  }

  for (const item of items.agentShards) {
    const pk = String(item.PK);
    // AGENTBAL#<agentId>#<shard>
    const agentId = typeof item.agentId === 'string' ? item.agentId : (pk.split('#')[1] ?? pk);
    agents.add(agentId);
    for (const c of CURRENCIES) {
      const value = item[c];
      if (typeof value === 'number' && value < 0) problems.push(`agent ${agentId} shard ${pk}: ${c} balance is negative (${value})`);
      const amount = typeof value === 'number' && Number.isSafeInteger(value) ? value : minor(value, `shard ${pk} ${c}`);
      if (amount === undefined) continue;
      totals[c].agentBalances += amount;
      agentShards.add(agentId, c, amount);
    }
  }

  for (const item of items.charges) {
    const where = `charge ${String(item.SK)}`;
    const agentId = typeof item.agentId === 'string' ? item.agentId : afterHash(item.PK);
    agents.add(agentId);
    const status = String(item.status);
    if (!CHARGE_STATUSES.has(status)) {
      problems.push(`${where}: unknown status ${JSON.stringify(item.status)}`);
      continue;
    }
    const currency = currencyOf(item, where);
    const amount = minor(item.amount, where, false);
    if (!currency || amount === undefined) continue;
    const userId = String(item.userId);
    if (status === 'SUCCESS') {
      agentCharges.add(agentId, currency, amount);
      userCharged.add(userId, currency, amount);
    } else if (status === 'PENDING') {
      totals[currency].held += amount;
      userCharged.add(userId, currency, amount);
    }
  }

  const inFlightByAgent = new Map<string, string[]>();
  for (const item of items.payouts) {
    const payoutId = String(item.SK);
    const where = `payout ${payoutId}`;
    const agentId = typeof item.agentId === 'string' ? item.agentId : afterHash(item.PK);
    agents.add(agentId);
    const status = String(item.status);
    if (!PAYOUT_STATUSES.has(status)) {
      problems.push(`${where}: unknown status ${JSON.stringify(item.status)}`);
      continue;
    }
    const currency = currencyOf(item, where);
    const gross = minor(item.amount, `${where} amount`, false);
    const fee = minor(item.fee, `${where} fee`);
    const net = minor(item.netAmount, `${where} netAmount`);
    if (!currency || gross === undefined || fee === undefined || net === undefined) continue;
    const expected = platformFee(gross);
    if (fee !== expected.fee || net !== expected.net) {
      problems.push(
        `${where}: gross ${formatAmount(gross, currency)} ${currency} should split into fee ${formatAmount(expected.fee, currency)} ` +
          `+ net ${formatAmount(expected.net, currency)}, found fee ${formatAmount(fee, currency)} + net ${formatAmount(net, currency)}`,
      );
    }
    if (status === 'COMPLETED') {
      totals[currency].payoutsPaidNet += net;
      totals[currency].platformFees += fee;
    } else if (status === 'PENDING' || status === 'PROCESSING') {
      totals[currency].inFlightGross += gross;
      inFlightByAgent.set(agentId, [...(inFlightByAgent.get(agentId) ?? []), payoutId]);
    }
    if (status !== 'FAILED') agentPayouts.add(agentId, currency, gross);
  }
  for (const [agentId, ids] of inFlightByAgent) {
    if (ids.length > 1) problems.push(`agent ${agentId}: ${ids.length} payouts in flight at once (${ids.join(', ')})`);
  }
  // The lock exists exactly while one of the agent's payouts is in flight, and names that payout.
  const lockByAgent = new Map<string, string>();
  for (const lock of items.payoutLocks) {
    const agentId = typeof lock.agentId === 'string' ? lock.agentId : afterHash(lock.PK);
    lockByAgent.set(agentId, String(lock.payoutId));
    const inFlight = inFlightByAgent.get(agentId) ?? [];
    if (!inFlight.includes(String(lock.payoutId))) {
      problems.push(
        `agent ${agentId}: payout lock names ${String(lock.payoutId)}, which is not in flight (a stuck lock blocks every withdrawal)`,
      );
    }
  }
  for (const [agentId, ids] of inFlightByAgent) {
    if (!lockByAgent.has(agentId)) problems.push(`agent ${agentId}: payout ${ids.join(', ')} in flight without the agent's payout lock`);
  }

  for (const c of CURRENCIES) {
    const t = totals[c];
    t.accountedFor = t.userBalances + t.agentBalances + t.held + t.payoutsPaidNet + t.platformFees + t.inFlightGross;
    t.difference = t.credited - t.accountedFor;
    if (t.difference !== 0) {
      const f = (m: Minor) => formatAmount(m, c);
      problems.push(
        `${c}: credited ${f(t.credited)} but accounted for ${f(t.accountedFor)} — difference ${f(t.difference)} ${c} ` +
          `(users ${f(t.userBalances)}, agents ${f(t.agentBalances)}, held ${f(t.held)}, paid net ${f(t.payoutsPaidNet)}, ` +
          `fees ${f(t.platformFees)}, in flight ${f(t.inFlightGross)})`,
      );
    }
  }

  const agentMismatches: AgentMismatch[] = [];
  for (const agentId of [...agents].sort()) {
    for (const c of CURRENCIES) {
      const successCharges = agentCharges.get(agentId, c);
      const shardBalance = agentShards.get(agentId, c);
      const payoutsGross = agentPayouts.get(agentId, c);
      const difference = successCharges - shardBalance - payoutsGross;
      if (difference === 0) continue;
      agentMismatches.push({ agentId, currency: c, successCharges, shardBalance, payoutsGross, difference });
      const f = (m: Minor) => formatAmount(m, c);
      problems.push(
        `agent ${agentId} ${c}: SUCCESS charges ${f(successCharges)} ≠ shard balances ${f(shardBalance)} + payouts gross ` +
          `${f(payoutsGross)} — difference ${f(difference)}`,
      );
    }
  }

  const userMismatches: UserMismatch[] = [];
  const userIds = new Set([...userCredits.ids(), ...userCharged.ids(), ...userBalance.ids()]);
  for (const userId of [...userIds].sort()) {
    for (const c of CURRENCIES) {
      const credited = userCredits.get(userId, c);
      const charged = userCharged.get(userId, c);
      const balance = userBalance.get(userId, c);
      const difference = credited - charged - balance;
      if (difference === 0) continue;
      userMismatches.push({ userId, currency: c, credited, charged, balance, difference });
      const f = (m: Minor) => formatAmount(m, c);
      problems.push(
        `user ${userId} ${c}: credits ${f(credited)} − charges ${f(charged)} ≠ balance ${f(balance)} — difference ${f(difference)}`,
      );
    }
  }

  return {
    ok: problems.length === 0,
    currencies: totals,
    agentMismatches,
    userMismatches,
    problems,
    counts: {
      users: items.users.length,
      agents: agents.size,
      shards: items.agentShards.length,
      credits: items.credits.length,
      charges: items.charges.length,
      payouts: items.payouts.length,
      scanned: items.scanned ?? 0,
    },
  };
}

/** Scans the configured table and checks the invariant. Run it when no money is moving. */
export async function runLedgerAudit(opts: { segments?: number } = {}): Promise<LedgerAuditReport> {
  return auditLedger(await scanLedgerItems(opts));
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
      `  ${cur.padEnd(4)} credited ${f(t.credited)} = users ${f(t.userBalances)} + agents ${f(t.agentBalances)} + held ${f(t.held)} ` +
        `+ paid net ${f(t.payoutsPaidNet)} + fees ${f(t.platformFees)} + in flight ${f(t.inFlightGross)}` +
        (t.difference === 0 ? '  ✓' : `  ✗ difference ${f(t.difference)}`),
    );
  }
  for (const p of report.problems) lines.push(`  ✗ ${p}`);
  return lines.join('\n');
}
