/**
 * The ledger audit's checks of what charges and credits promised (ledger-checks.ts has the whole):
 * a charge's amounts along its lifecycle, x402 credits against the settlements they stand on, and a
 * grant's counters against its charges. Pure; one sentence per break.
 */
import { formatAmount, type Minor } from '../core/money';
import type { X402PaymentRow } from '../store/audit/ledger-rows.chain';
import type { ChargeRow } from '../store/audit/ledger-rows.charges';
import type { Rows } from './ledger-checks';

/**
 * The charge lifecycle's own invariants, per charge (docs/lifecycle.md): refunds never pass what
 * was charged and only a SUCCESS charge has any; the operator's refunds (`operatorRefundedAmount`)
 * are a part of the charge's refunds, never more, and never of a purchase (it paid a seller, so the
 * operator's refund refuses it); a hold's captured amount is more than zero and at most what was
 * authorized, and a hold that did not succeed (PENDING, released, declined, expired) still shows
 * the whole authorized amount (nothing was taken from it).
 */
export function lifecycleProblems(charges: readonly ChargeRow[]): string[] {
  const problems: string[] = [];
  for (const c of charges) {
    const f = (m: Minor) => formatAmount(m, c.currency);
    if (c.refundedAmount < 0 || c.refundedAmount > c.amount) {
      problems.push(`charge ${c.chargeId}: refunded ${f(c.refundedAmount)} ${c.currency} of ${f(c.amount)}`);
    }
    if (c.refundedAmount > 0 && c.status !== 'SUCCESS')
      problems.push(`charge ${c.chargeId}: ${c.status} but refunded ${f(c.refundedAmount)}`);
    const byOperator = c.operatorRefundedAmount ?? 0;
    if (byOperator > c.refundedAmount) {
      problems.push(
        `charge ${c.chargeId}: the operator refunded ${f(byOperator)} ${c.currency} but its refunds total ${f(c.refundedAmount)}`,
      );
    }
    if (byOperator > 0 && c.purchase) problems.push(`charge ${c.chargeId}: a purchase, but the operator refunded ${f(byOperator)}`);
    if (c.authorizedAmount === undefined) continue;
    if (c.status === 'SUCCESS' && !(c.amount > 0 && c.amount <= c.authorizedAmount)) {
      problems.push(`charge ${c.chargeId}: captured ${f(c.amount)} ${c.currency} of an authorized ${f(c.authorizedAmount)}`);
    }
    if (c.status !== 'SUCCESS' && c.amount !== c.authorizedAmount) {
      problems.push(`charge ${c.chargeId}: ${c.status} hold of ${f(c.amount)} ${c.currency} but authorized ${f(c.authorizedAmount)}`);
    }
  }
  return problems;
}

/**
 * x402 credits against treasury inflow (docs/x402.md): every CREDITED settlement (a transaction the
 * chain confirmed into the treasury) has exactly its one payment record, for the same agent and
 * amount, and every payment record stands on a CREDITED settlement of its transaction. A PENDING or
 * FAILED settlement has none.
 */
export function x402Problems(rows: Pick<Rows, 'x402Payments' | 'x402Settlements'>): string[] {
  const problems: string[] = [];
  const bySignature = new Map<string, X402PaymentRow[]>();
  for (const p of rows.x402Payments ?? []) bySignature.set(p.transaction, [...(bySignature.get(p.transaction) ?? []), p]);
  const settled = new Set<string>();
  for (const s of rows.x402Settlements ?? []) {
    settled.add(s.signature);
    const payments = bySignature.get(s.signature) ?? [];
    if (s.status !== 'CREDITED') {
      if (payments.length > 0) problems.push(`x402 settlement ${s.signature} is ${s.status} but has ${payments.length} payment record(s)`);
      continue;
    }
    const [only, ...more] = payments;
    if (!only || more.length > 0) {
      problems.push(`x402 settlement ${s.signature} is CREDITED with ${payments.length} payment records (exactly one expected)`);
    } else if (only.agentId !== s.agentId || only.amount !== s.amount || (s.paymentId && s.paymentId !== only.paymentId)) {
      problems.push(`x402 settlement ${s.signature} does not match its payment ${only.paymentId} (agent, amount or id)`);
    }
  }
  for (const [signature, payments] of bySignature) {
    if (!settled.has(signature))
      problems.push(`x402 payment(s) ${payments.map((p) => p.paymentId).join(', ')} credit ${signature}, which has no settlement`);
  }
  return problems;
}

/**
 * A grant's counters against its charges (docs/grants.md, store/charges/grant-charge.ts): `spent` = its
 * SUCCESS charges (what was captured) + its open holds (PENDING), in the grant's currency, and each
 * period counter (`spentDay`, `spentMonth`: `{p, v}`) = the same sum over the charges that period
 * counted. A release, decline or expiry gives a hold back, and a capture of less its uncaptured
 * rest, in the settlement's own transaction. **Refunds do not give back to the grant**: a refund
 * moves money from the agent back to the payer (store/charges/charge-lifecycle.repository.ts) and leaves
 * the grant item alone, so a refunded charge, still SUCCESS, counts in full. Every charge made under
 * a grant is that grant's agent's and currency's, and names a grant that exists.
 */
export function grantProblems(rows: Pick<Rows, 'grants' | 'charges'>): string[] {
  const problems: string[] = [];
  const grants = new Map((rows.grants ?? []).map((g) => [g.grantId, g]));
  const byGrant = new Map<string, ChargeRow[]>();
  for (const c of rows.charges) {
    if (c.grantId === undefined) continue;
    const grant = grants.get(c.grantId);
    if (!grant) {
      problems.push(`charge ${c.chargeId} was made under grant ${c.grantId}, which does not exist`);
      continue;
    }
    if (c.agentId !== grant.agentId || c.currency !== grant.currency || c.userId !== grant.userId) {
      problems.push(
        `charge ${c.chargeId} of agent ${c.agentId} and user ${c.userId} in ${c.currency} was made under grant ${grant.grantId}, ` +
          `which is agent ${grant.agentId}'s from user ${grant.userId} in ${grant.currency}`,
      );
    }
    byGrant.set(c.grantId, [...(byGrant.get(c.grantId) ?? []), c]);
  }
  for (const g of grants.values()) {
    const f = (m: Minor) => formatAmount(m, g.currency);
    const counting = (byGrant.get(g.grantId) ?? []).filter((c) => c.status === 'SUCCESS' || c.status === 'PENDING');
    const sum = (charges: readonly ChargeRow[]) => charges.reduce((total, c) => total + c.amount, 0);
    const success = sum(counting.filter((c) => c.status === 'SUCCESS'));
    const held = sum(counting.filter((c) => c.status === 'PENDING'));
    if (g.spent !== success + held) {
      problems.push(
        `grant ${g.grantId} ${g.currency}: spent ${f(g.spent)} ≠ SUCCESS charges ${f(success)} + open holds ${f(held)} ` +
          `— difference ${f(g.spent - success - held)}`,
      );
    }
    for (const [name, counter, period] of [
      ['spentHour', g.spentHour, 'hour'],
      ['spentDay', g.spentDay, 'day'],
      ['spentMonth', g.spentMonth, 'month'],
    ] as const) {
      if (!counter) continue;
      const expected = sum(counting.filter((c) => c[period] === counter.p));
      if (counter.v !== expected) {
        problems.push(
          `grant ${g.grantId} ${g.currency}: ${name} ${counter.p} holds ${f(counter.v)} ≠ its SUCCESS charges and open holds ` +
            `of that ${period} ${f(expected)} — difference ${f(counter.v - expected)}`,
        );
      }
    }
  }
  return problems;
}
