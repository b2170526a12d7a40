/**
 * The ledger audit's top-up check (pure, over functions/store/topups/topup-audit.repository.ts rows).
 * Completed top-ups are money in: each one's CREDITS# record is counted by the main invariant
 * like an admin credit. This check ties the records to the top-ups, so a credit can neither exist
 * without its top-up nor a top-up complete without exactly one credit:
 *   - a COMPLETED top-up has exactly one credit record naming it, of its amount and currency, and
 *     exactly one credit-once guard (signature / capture id) naming it;
 *   - a PENDING or EXPIRED top-up has no credit record and no guard;
 *   - every credit record that names a top-up names one that exists;
 *   - each payer's open-top-up counter (the cap of 10) equals their PENDING top-ups that hold a
 *     slot: a counter that drifted would refuse a payer too early, or let them open too many;
 *   - every reversal (REVERSALS#) has exactly one once-per-refund guard and every guard its
 *     reversal; what a capture's credit guard says was reversed is the sum of its reversals, and
 *     never more than it credited. (What reversals took from balances is in the ledger invariant.)
 */
import type { TopupAuditRows } from '../store/topups/topup-audit.repository';

export function topupProblems(rows: TopupAuditRows): string[] {
  const problems: string[] = [];
  const creditsBy = new Map<string, TopupAuditRows['credits']>();
  for (const credit of rows.credits) creditsBy.set(credit.topupId, [...(creditsBy.get(credit.topupId) ?? []), credit]);
  const guardsBy = new Map<string, number>();
  for (const guard of rows.guards) guardsBy.set(guard.topupId, (guardsBy.get(guard.topupId) ?? 0) + 1);
  const known = new Set(rows.topups.map((t) => t.topupId));
  for (const topup of rows.topups) {
    const credits = creditsBy.get(topup.topupId) ?? [];
    const guards = guardsBy.get(topup.topupId) ?? 0;
    if (topup.status === 'COMPLETED') {
      if (credits.length !== 1) problems.push(`top-up ${topup.topupId} is COMPLETED with ${credits.length} credit records (expected 1)`);
      if (guards !== 1) problems.push(`top-up ${topup.topupId} is COMPLETED with ${guards} credit-once guards (expected 1)`);
      for (const credit of credits) {
        if (credit.amount !== topup.amount || credit.currency !== topup.currency || credit.userId !== topup.userId) {
          problems.push(
            `top-up ${topup.topupId} received ${topup.amount} ${topup.currency} for ${topup.userId} but its credit is ${credit.amount} ${credit.currency} for ${credit.userId}`,
          );
        }
      }
    } else if (credits.length > 0 || guards > 0) {
      problems.push(`top-up ${topup.topupId} is ${topup.status} but has ${credits.length} credit records and ${guards} guards`);
    }
  }
  const openBy = new Map<string, number>();
  for (const topup of rows.topups) {
    if (topup.status === 'PENDING' && topup.holdsOpenSlot) openBy.set(topup.userId, (openBy.get(topup.userId) ?? 0) + 1);
  }
  const counters = new Map(rows.openCounters.map((c) => [c.userId, c.open]));
  for (const userId of new Set([...openBy.keys(), ...counters.keys()])) {
    const pending = openBy.get(userId) ?? 0;
    const counted = counters.get(userId) ?? 0;
    if (pending !== counted) problems.push(`user ${userId} has ${pending} open top-ups but their counter says ${counted}`);
  }
  const reversals = rows.reversals ?? [];
  const guardRefunds = new Map<string, number>();
  for (const g of rows.reversalGuards ?? []) guardRefunds.set(g.refundId, (guardRefunds.get(g.refundId) ?? 0) + 1);
  const recordRefunds = new Map<string, number>();
  for (const r of reversals) recordRefunds.set(r.refundId, (recordRefunds.get(r.refundId) ?? 0) + 1);
  for (const refundId of new Set([...guardRefunds.keys(), ...recordRefunds.keys()])) {
    const records = recordRefunds.get(refundId) ?? 0;
    const guards = guardRefunds.get(refundId) ?? 0;
    if (records !== 1 || guards !== 1)
      problems.push(`refund ${refundId} has ${records} reversal records and ${guards} guards (expected 1 and 1)`);
  }
  const reversedBy = new Map<string, number>();
  for (const r of reversals) reversedBy.set(r.captureId, (reversedBy.get(r.captureId) ?? 0) + r.amount);
  for (const guard of rows.guards) {
    if (!guard.key.startsWith('TOPUPCREDIT#PAYPAL#')) continue;
    const captureId = guard.key.slice('TOPUPCREDIT#PAYPAL#'.length);
    const recorded = reversedBy.get(captureId) ?? 0;
    const onGuard = guard.reversed ?? 0;
    if (onGuard !== recorded) problems.push(`capture ${captureId}: its credit says ${onGuard} reversed, its reversals ${recorded}`);
    if (onGuard > guard.amount) problems.push(`capture ${captureId}: ${onGuard} reversed of ${guard.amount} credited`);
    reversedBy.delete(captureId);
  }
  for (const [captureId, amount] of reversedBy) problems.push(`reversals of ${amount} name capture ${captureId}, which was never credited`);
  for (const credit of rows.credits) {
    if (!known.has(credit.topupId))
      problems.push(
        `credit of ${credit.amount} ${credit.currency} to ${credit.userId} names top-up ${credit.topupId}, which does not exist`,
      );
  }
  return problems;
}
