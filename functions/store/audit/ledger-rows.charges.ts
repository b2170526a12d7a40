/**
 * The ledger audit's rows of charges and the grants that count them (ledger-rows.mapper.ts): a
 * charge's amounts and the UTC periods it was counted in, a grant's spent and period counters, read
 * side by side so the audit can tie one to the other. Pure.
 */
import type { ChargeStatus } from '../../core/charges';
import type { Currency, Minor } from '../../core/money';
import { afterHash, type Item, idOr, type RowReader } from './ledger-rows.reader';

export interface ChargeRow {
  kind: 'charge';
  chargeId: string;
  agentId: string;
  userId: string;
  status: ChargeStatus;
  currency: Currency;
  amount: Minor;
  /** Holds (docs/lifecycle.md): what was authorized; `amount` is what was captured once SUCCESS. */
  authorizedAmount?: Minor;
  /** Given back by refunds, cumulative (0 when none). */
  refundedAmount: Minor;
  /** The operator's part of `refundedAmount` (its refunds and `return-earnings`), when it gave any back. */
  operatorRefundedAmount?: Minor;
  /** Made with a grant key (docs/grants.md): the grant whose `spent` counts it. */
  grantId?: string;
  /** The UTC day and month whose counters counted it (`counted`, or its `createdAt` on older items). */
  day?: string;
  month?: string;
  /** The UTC hour of its grant's hour counter, when one counted it (`counted.hour`: a grant with an hourly limit). */
  hour?: string;
  /** An x402 purchase (DESIGN §22): paid to a seller by the hot wallet, not to its agent; its transaction once captured. */
  purchase?: { transaction?: string };
}

/** A running counter of one UTC period on a grant item: `p` the day or month, `v` minor units. */
export interface PeriodCounter {
  p: string;
  v: Minor;
}

/**
 * A grant (`GRANTS#<userId>/<grantId>`, store/identity/grant.repository.ts): what it has counted as spent,
 * in all and in its current UTC day and month (store/charges/grant-charge.ts).
 */
export interface GrantRow {
  kind: 'grant';
  grantId: string;
  userId: string;
  agentId: string;
  currency: Currency;
  spent: Minor;
  /** Only on a grant with an hourly limit (DESIGN §27). */
  spentHour?: PeriodCounter;
  spentDay?: PeriodCounter;
  spentMonth?: PeriodCounter;
}

const CHARGE_STATUSES: ReadonlySet<string> = new Set<ChargeStatus>(['PENDING', 'SUCCESS', 'FAILED', 'EXPIRED']);

/**
 * The UTC day and month whose counters counted a charge: its `counted` record (store/charges/charge-items.ts
 * `chargeItems`), or, on items written before it existed, the periods of its `createdAt` (as
 * core/charges.ts `countedOf` reads them).
 */
function periodsCounted(item: Item): { day?: string; month?: string; hour?: string } {
  const c = item.counted as Record<string, unknown> | undefined;
  if (c && typeof c === 'object' && typeof c.day === 'string' && typeof c.month === 'string') {
    return { day: c.day, month: c.month, ...(typeof c.hour === 'string' ? { hour: c.hour } : {}) };
  }
  return typeof item.createdAt === 'string' ? { day: item.createdAt.slice(0, 10), month: item.createdAt.slice(0, 7) } : {};
}

/** A charge each; one of unknown status is noted and left out. */
export function chargeRows(items: readonly Item[], reader: RowReader): ChargeRow[] {
  const { note, minor, currencyOf } = reader;
  const charges: ChargeRow[] = [];
  for (const item of items) {
    const where = `charge ${String(item.SK)}`;
    // CHARGES#<agentId>#<shard>, or (written before the sharding) CHARGES#<agentId>.
    const agentId = idOr(item.agentId, String(item.PK).split('#')[1] ?? String(item.PK));
    if (!CHARGE_STATUSES.has(String(item.status))) {
      note(`${where}: unknown status ${JSON.stringify(item.status)}`, agentId);
      continue;
    }
    const currency = currencyOf(item, where, agentId);
    const amount = minor(item.amount, where, false, agentId);
    if (!currency || amount === undefined) continue;
    const status = String(item.status) as ChargeStatus;
    const refundedAmount = minor(item.refundedAmount, `${where} refundedAmount`, true, agentId);
    const authorizedAmount =
      item.authorizedAmount === undefined ? undefined : minor(item.authorizedAmount, `${where} authorizedAmount`, false, agentId);
    if (refundedAmount === undefined || (item.authorizedAmount !== undefined && authorizedAmount === undefined)) continue;
    const operatorRefundedAmount =
      item.operatorRefundedAmount === undefined
        ? undefined
        : minor(item.operatorRefundedAmount, `${where} operatorRefundedAmount`, true, agentId);
    charges.push({
      kind: 'charge',
      chargeId: String(item.SK),
      agentId,
      userId: String(item.userId),
      status,
      currency,
      amount,
      refundedAmount,
      ...(operatorRefundedAmount !== undefined ? { operatorRefundedAmount } : {}),
      ...(authorizedAmount !== undefined ? { authorizedAmount } : {}),
      ...(typeof item.grantId === 'string' ? { grantId: item.grantId, ...periodsCounted(item) } : {}),
      ...(item.purchase !== null && typeof item.purchase === 'object'
        ? {
            purchase:
              typeof (item.purchase as { transaction?: unknown }).transaction === 'string'
                ? { transaction: String((item.purchase as { transaction: string }).transaction) }
                : {},
          }
        : {}),
    });
  }
  return charges;
}

/** A grant's spent and period counters each. */
export function grantRows(items: readonly Item[], reader: RowReader): GrantRow[] {
  const { note, minor, currencyOf } = reader;
  const grants: GrantRow[] = [];
  for (const item of items) {
    const grantId = idOr(item.grantId, String(item.SK));
    const where = `grant ${grantId}`;
    const currency = currencyOf(item, where);
    const spent = minor(item.spent, `${where} spent`, true);
    /** A period counter `{p, v}`; undefined when absent (no charge yet), null when unreadable (noted). */
    const counter = (name: 'spentHour' | 'spentDay' | 'spentMonth'): PeriodCounter | undefined | null => {
      const value = item[name] as Record<string, unknown> | null | undefined;
      if (value === undefined) return undefined;
      if (value === null || typeof value !== 'object' || typeof value.p !== 'string') {
        note(`${where} ${name}: ${JSON.stringify(value)} is not a period counter`);
        return null;
      }
      const v = minor(value.v, `${where} ${name}`, true);
      return v === undefined ? null : { p: value.p, v };
    };
    const spentHour = counter('spentHour');
    const spentDay = counter('spentDay');
    const spentMonth = counter('spentMonth');
    if (!currency || spent === undefined || spentHour === null || spentDay === null || spentMonth === null) continue;
    grants.push({
      kind: 'grant',
      grantId,
      userId: idOr(item.userId, afterHash(item.PK)),
      agentId: String(item.agentId),
      currency,
      spent,
      ...(spentHour ? { spentHour } : {}),
      ...(spentDay ? { spentDay } : {}),
      ...(spentMonth ? { spentMonth } : {}),
    });
  }
  return grants;
}
