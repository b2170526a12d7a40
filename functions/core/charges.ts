/** Charges: an agent's debit of a user's balance. */
import type { Currency, Minor } from './money';
import { periodsOf } from './policy';
import type { PurchaseTerms } from './purchases';

export type ChargeStatus = 'PENDING' | 'SUCCESS' | 'FAILED' | 'EXPIRED';

export interface Charge {
  id: string;
  agentId: string;
  userId: string;
  idempotencyKey: string;
  amount: Minor;
  currency: Currency;
  description: string;
  status: ChargeStatus;
  createdAt: string;
  /** The agent's name when charged (the user's history shows it without a read per row). */
  agentName?: string;
  /** Why a FAILED charge failed: the refusal's exact error string, or `declined by user`. */
  failureReason?: string;
  /** Why a PENDING charge waits: the user's approval, or (holds) the agent's capture. */
  pendingReason?: PendingReason;
  /** When a PENDING charge expires (ISO). */
  expiresAt?: string;
  /**
   * Authorize-then-capture (`capture: false`, docs/lifecycle.md): how long the hold lasts once it
   * waits for the capture, in seconds. Present exactly on holds.
   */
  holdSeconds?: number;
  /** Holds: the amount authorized (held). `amount` is what was captured once SUCCESS. */
  authorizedAmount?: Minor;
  /** The grant whose key made the charge (DESIGN §16); absent for a charge made with the account key. */
  grantId?: string;
  /** What was given back to the user by refunds, cumulative (absent: none). */
  refundedAmount?: Minor;
  /**
   * The payer's spend counters this charge was added to (store/charges/charge-items.ts `payerDebit`), set on every charge
   * that moved or held money. Never shown: what giving the hold back takes off is exactly this.
   */
  counted?: SpendCounted;
  /**
   * Stored in the agent's unsharded partition, as charges were before DESIGN §18 sharded them:
   * where its writes go (store/charges/charge-read.repository.ts `chargeKeyOf`). Never shown.
   */
  legacyPartition?: true;
  /** An x402 purchase (DESIGN §22, core/purchases.ts): the hold of a payment to an x402 seller. */
  purchase?: PurchaseTerms;
  /**
   * A FAILED charge refused by a windowed grant limit: which, and its window. Never shown; the
   * dispatcher reads it from the charge's INSERT record to send `grant.limit.reached` (core/grant-alerts.ts).
   */
  grantLimit?: { limit: 'hourly' | 'daily' | 'monthly' | 'total'; window: string };
  /** The hold of a tab (DESIGN §29, core/tabs.ts): captured at the tab's close for what was used. */
  tabId?: string;
}

/**
 * Which of the payer's spend counters counted a charge, with their periods: the user's UTC day
 * and month counters of its currency always, the agent's own counters of the same periods only
 * when the payer's policy gave that agent daily/monthly limits at the time (docs/payers.md: an agent limit
 * counts from when it is set). A decline, release, expiry or the uncaptured rest of a capture
 * lowers exactly these, and only while they are still of these periods.
 *
 * A charge written before this record existed has none: its user counters are its createdAt's
 * periods (every charge has always been added to them) and its agent counter is taken as not
 * counting it (`countedOf`). That errs safe: at worst an agent's counter stays higher than its
 * charges until the period ends, refusing sooner, never later.
 */
export interface SpendCounted {
  /** UTC day (`2026-11-23`) of the user's and (with `agent`) the agent's day counters. */
  day: string;
  /** UTC month (`2026-11`) of the month counters. */
  month: string;
  /** The agent's own counters counted it too. */
  agent: boolean;
  /** UTC hour (`2026-11-23T10`) of its grant's hour counter, kept only by a grant with an hourly limit (DESIGN §27). */
  hour?: string;
}

/** What counted `charge`: its record, or for a charge from before the record, the safe default. */
export function countedOf(charge: { createdAt: string; counted?: SpendCounted }): SpendCounted {
  return charge.counted ?? { ...periodsOf(new Date(charge.createdAt)), agent: false };
}

/** The failureReason of a hold the agent released. */
export const RELEASED_BY_AGENT = 'released by agent';

export type PendingReason = 'user_approval' | 'capture';

/**
 * Deepest item a page number may reach. Past it a page-number request would step over more keys
 * than it returns; the cursor continues from where the last page ended at the cost of page 1.
 */
export const MAX_PAGE_DEPTH = 10_000;
