/**
 * A user's spending policy (docs/design.md §11), in minor units, and what it says about one
 * charge. Pure: the store turns the answer into condition expressions on the user's item, so
 * the limits hold inside the charge's own transaction, race-free.
 */
import type { Currency, Minor } from './money';

/** An amount per currency; an absent currency has no limit. */
export type Limits = Partial<Record<Currency, Minor>>;

export interface PolicyRules {
  perCharge?: Limits;
  /** The UTC day. */
  daily?: Limits;
  /** The UTC calendar month. */
  monthly?: Limits;
  /** Charges above this wait for the user's approval (202 PENDING). */
  approvalAbove?: Limits;
}

export interface AgentRules extends PolicyRules {
  blocked?: boolean;
}

export interface SpendingPolicy extends PolicyRules {
  /** How long a PENDING charge waits for the user; default 900 s. */
  approvalWindowSeconds?: number;
  /** Rules for one agent, on top of the user-wide ones. */
  agents?: Record<string, AgentRules>;
}

export const DEFAULT_APPROVAL_WINDOW_SECONDS = 900;

/** The UTC day (`2026-11-23`) and month (`2026-11`) a moment counts in. */
export function periodsOf(at: Date): { day: string; month: string } {
  const iso = at.toISOString();
  return { day: iso.slice(0, 10), month: iso.slice(0, 7) };
}

/** A running-total limit the charge's own write must respect: `spent + amount <= limit`. */
export interface PeriodLimit {
  period: 'day' | 'month';
  /** Whose counter: the user's across agents, or this agent's. */
  scope: 'user' | 'agent';
  limit: Minor;
}

export type PolicyVerdict =
  | { kind: 'blocked' }
  | { kind: 'over-limit' }
  | {
      kind: 'allowed';
      /** Running totals to keep within; checked by the store inside the transaction. */
      limits: PeriodLimit[];
      /** Whether the agent has its own daily/monthly limits: only then is its counter kept. */
      agentCounters: boolean;
      needsApproval: boolean;
    };

const over = (limits: Limits | undefined, currency: Currency, amount: Minor) => {
  const limit = limits?.[currency];
  return limit !== undefined && amount > limit;
};

/**
 * What the policy says about a charge of `amount` by `agentId`, in the order the contract checks:
 * blocked, then per-charge limits (a limit the amount alone breaks is refused here, before any
 * write), then the running totals the store enforces, then whether it needs approval.
 */
export function judge(policy: SpendingPolicy, agentId: string, currency: Currency, amount: Minor): PolicyVerdict {
  const agent = policy.agents?.[agentId];
  if (agent?.blocked) return { kind: 'blocked' };
  const scopes: [PolicyRules, 'user' | 'agent'][] = [[policy, 'user']];
  if (agent) scopes.push([agent, 'agent']);
  const limits: PeriodLimit[] = [];
  for (const [rules, scope] of scopes) {
    if (over(rules.perCharge, currency, amount) || over(rules.daily, currency, amount) || over(rules.monthly, currency, amount)) {
      return { kind: 'over-limit' };
    }
    const daily = rules.daily?.[currency];
    const monthly = rules.monthly?.[currency];
    if (daily !== undefined) limits.push({ period: 'day', scope, limit: daily });
    if (monthly !== undefined) limits.push({ period: 'month', scope, limit: monthly });
  }
  const needsApproval = scopes.some(([rules]) => over(rules.approvalAbove, currency, amount));
  return { kind: 'allowed', limits, agentCounters: limits.some((l) => l.scope === 'agent'), needsApproval };
}

/** The approval window in seconds. */
export const approvalWindow = (policy: SpendingPolicy): number => policy.approvalWindowSeconds ?? DEFAULT_APPROVAL_WINDOW_SECONDS;
