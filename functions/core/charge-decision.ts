/**
 * What a new charge gets (docs/design.md §11, §12, §16), decided from values alone: the payer's
 * policy as cached, the grant's terms when a grant key made it, and whether it is a hold. In the
 * contract's order: blocked (403), a limit the amount alone breaks (402: the policy's, then the
 * grant's), then accepted as SUCCESS, or PENDING for the payer's approval (above a threshold of
 * the policy or the grant) or for the agent's capture. The running totals are not decided here:
 * the store writes them under conditions (`limits`), so they hold under any concurrency.
 */
import type { Charge, PendingReason } from './charges';
import { GRANT_LIMIT_NAMES, type GrantLimits } from './grants';
import type { Currency, Minor } from './money';
import { approvalWindow, judge, type PeriodLimit, type SpendingPolicy } from './policy';

/** The grant terms a charge is judged by (the grant key's lookup item carries them; they never change). */
export interface ChargeGrantTerms {
  limits: GrantLimits;
  approvalAbove?: Minor;
  expiresAt?: string;
}

export interface ChargeRequestTerms {
  policy: SpendingPolicy;
  agentId: string;
  currency: Currency;
  amount: Minor;
  /** A hold (authorize now, capture later) for this many seconds; absent: a plain charge. */
  holdSeconds?: number;
  grant?: ChargeGrantTerms;
  now: Date;
}

export type ChargeDecision =
  /** `grant-over-limit` is the grant's own limit: the payer's policy did not refuse it. */
  | { kind: 'refused'; reason: 'blocked' | 'over-limit' | 'grant-over-limit' }
  | {
      kind: 'accepted';
      /** The policy's running totals the charge's write must keep within. */
      limits: PeriodLimit[];
      agentCounters: boolean;
      /** Waits for the payer (202), by the policy's threshold or the grant's. */
      needsApproval: boolean;
      /** PENDING (money held), for the payer's approval or the agent's capture; absent: SUCCESS now. */
      pending?: { reason: PendingReason; expiresAt: string };
    };

/** A charge the decision accepted: what its write must hold to, and whether it waits. */
export type AcceptedCharge = Extract<ChargeDecision, { kind: 'accepted' }>;

/** The charge as accepted: SUCCESS, or PENDING with the decision's reason and deadline. */
export function chargeAsDecided(made: Charge, decision: AcceptedCharge): Charge {
  const { pending } = decision;
  return pending ? { ...made, status: 'PENDING', pendingReason: pending.reason, expiresAt: pending.expiresAt } : made;
}

/** Which grant limit the amount alone exceeds (no counter needed), or undefined; the counters are the store's condition. */
export function grantLimitRefusal(limits: GrantLimits, amount: Minor): keyof GrantLimits | undefined {
  for (const name of GRANT_LIMIT_NAMES) {
    const limit = limits[name];
    if (limit !== undefined && amount > limit) return name;
  }
  return undefined;
}

export function decideCharge(terms: ChargeRequestTerms): ChargeDecision {
  const { policy, agentId, currency, amount, holdSeconds, grant, now } = terms;
  const verdict = judge(policy, agentId, currency, amount);
  if (verdict.kind === 'blocked') return { kind: 'refused', reason: 'blocked' };
  if (verdict.kind === 'over-limit') return { kind: 'refused', reason: 'over-limit' };
  if (grant && grantLimitRefusal(grant.limits, amount)) return { kind: 'refused', reason: 'grant-over-limit' };
  const needsApproval = verdict.needsApproval || (grant?.approvalAbove !== undefined && amount > grant.approvalAbove);
  // Nothing under a grant pays its agent after the grant ends (docs/grants.md): its holds and
  // approval windows end with it, so the answer tells the agent its real deadline.
  const until = (seconds: number) => {
    const natural = new Date(now.getTime() + seconds * 1000).toISOString();
    return grant?.expiresAt !== undefined && grant.expiresAt < natural ? grant.expiresAt : natural;
  };
  const accepted = { kind: 'accepted' as const, limits: verdict.limits, agentCounters: verdict.agentCounters, needsApproval };
  if (needsApproval) return { ...accepted, pending: { reason: 'user_approval', expiresAt: until(approvalWindow(policy)) } };
  if (holdSeconds !== undefined) return { ...accepted, pending: { reason: 'capture', expiresAt: until(holdSeconds) } };
  return accepted;
}
