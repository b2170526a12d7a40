/**
 * Tabs (DESIGN §29, docs/tabs.md): hold once, meter many uses, capture what was used. A tab is a
 * hold (a PENDING charge with `tabId`, made by the charge's own path) and a tab item of its own
 * partition that counts what was used against the limit. A use touches only that partition: the
 * payer's and the agent's balance items move once at the opening (the hold) and once at the close
 * (the capture of `used`, the rest released). Pure: what a use, a close and a view decide.
 */
import type { Charge } from './charges';
import type { Currency, Minor } from './money';

/**
 * `PENDING_APPROVAL`: its hold waits for the payer's approval (above `approvalAbove`), no use yet;
 * `OPEN`: uses are taken; `CLOSED`: `used` was captured and the rest released (or nothing was held any more).
 */
export type TabStatus = 'PENDING_APPROVAL' | 'OPEN' | 'CLOSED';
export const TAB_STATUSES = ['PENDING_APPROVAL', 'OPEN', 'CLOSED'] as const;

/** Who or what closed a tab. */
export type TabCloser = 'agent' | 'payer' | 'expiry' | 'declined' | 'agent disabled' | 'agent blocked';

export interface Tab {
  id: string;
  agentId: string;
  userId: string;
  currency: Currency;
  limit: Minor;
  used: Minor;
  usageCount: number;
  status: TabStatus;
  /** The hold's charge (`Charge.tabId` names the tab back). */
  chargeId: string;
  grantId?: string;
  expiresAt: string;
  createdAt: string;
  closedAt?: string;
  closedBy?: TabCloser;
}

/** One use of a tab: its item is also the use's idempotency record (keyed by the Idempotency-Key). */
export interface TabUsage {
  tabId: string;
  usageId: string;
  amount: Minor;
  currency: Currency;
  description: string;
  /** What the tab had used once this use was taken: the answer's `used` (and `remaining`). */
  usedAfter: Minor;
  limit: Minor;
  createdAt: string;
  /** What makes two uses under one key "the same" (use-cases/idempotency.ts `fingerprint`). */
  fingerprint: string;
}

/** How long a tab stays open when `ttlSeconds` is not given. */
export const DEFAULT_TAB_SECONDS = 3600;

export type UsageDecision =
  | { kind: 'use'; usedAfter: Minor }
  | { kind: 'refused'; reason: 'not-open' | 'limit-exceeded' }
  /** The tab as known may be stale: only its item's condition can say. */
  | { kind: 'ask' };

/**
 * What a use of `amount` gets against the tab as this container last saw it. `used` only grows and
 * `limit` never changes, so a use over the limit by a stale copy is over it by the real one too; a
 * CLOSED tab never reopens. Everything else is the write's condition to decide.
 */
export function decideUsage(tab: Pick<Tab, 'status' | 'used' | 'limit' | 'expiresAt'>, amount: Minor, now: Date): UsageDecision {
  if (tab.status === 'CLOSED') return { kind: 'refused', reason: 'not-open' };
  if (tab.used + amount > tab.limit) return { kind: 'refused', reason: 'limit-exceeded' };
  if (tab.status !== 'OPEN' || tab.expiresAt <= now.toISOString()) return { kind: 'ask' };
  return { kind: 'use', usedAfter: tab.used + amount };
}

/** The tab a hold opens (`Charge.tabId`): waiting for the payer's approval, or OPEN until the hold's `expiresAt`. */
export function tabOfHold(hold: Charge, awaitsApproval: boolean): Tab {
  if (hold.tabId === undefined || hold.expiresAt === undefined) throw new Error(`charge ${hold.id} is no tab's hold`);
  return {
    id: hold.tabId,
    agentId: hold.agentId,
    userId: hold.userId,
    currency: hold.currency,
    limit: hold.amount,
    used: 0,
    usageCount: 0,
    status: awaitsApproval ? 'PENDING_APPROVAL' : 'OPEN',
    chargeId: hold.id,
    ...(hold.grantId !== undefined ? { grantId: hold.grantId } : {}),
    expiresAt: hold.expiresAt,
    createdAt: hold.createdAt,
  };
}

/** The failureReason of a tab's hold closed with nothing used (all of it released). */
export const TAB_CLOSED_UNUSED = 'tab closed unused';
