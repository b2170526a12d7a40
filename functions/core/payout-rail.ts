/**
 * The payout rail contract, the port the payout use case and the payout repository depend on:
 * Solana (USDC) and PayPal (USD) implement it in functions/rails. The payout worker calls `pay`
 * for a claimed payout; a rail must be safe to call again for the same payout after a crash at any
 * point (SQS redelivers), and must never move money twice.
 *
 * It lives in core, not in rails, so that the store can persist a rail's checkpoint without
 * importing the rails (and with them @solana/web3.js and the PayPal client).
 */
import type { Currency, Minor } from './money';

export interface PayoutInstruction {
  payoutId: string;
  currency: Currency;
  /** What arrives at the destination: gross minus the fees, in minor units. */
  netAmount: Minor;
  /** Solana wallet address (USDC) or PayPal e-mail / payer id (USD). */
  destination: string;
  /**
   * Solana: the withdrawal paid the account-creation fee, so the payout creates the destination's
   * USDC token account if it is missing (in the transaction that pays). Without it a missing
   * account is a `failed` payout. Other rails ignore it.
   */
  createTokenAccount?: boolean;
  /**
   * Asked right before the rail starts paying (Solana: before it signs a transaction, first or
   * anew, and before it re-sends a saved one; PayPal: before its first create): false when the
   * payout may not be paid now (its agent was disabled). The rail then answers `held`, having
   * started nothing, or, when something it sent earlier may still move money, finds out what
   * that does. Absent: always true.
   */
  mayPay?: () => Promise<boolean>;
}

/** Rail progress saved on the payout item (e.g. Solana signature + last valid block height). */
export type RailState = Readonly<Record<string, string | number>>;

export interface RailCheckpoint {
  /** What a previous attempt saved, if anything. */
  readonly saved: RailState | undefined;
  /**
   * Persists progress durably BEFORE the rail does the step it describes. Must throw when this
   * attempt no longer owns the payout (another attempt took over), so that no two attempts ever
   * act on different saved states; the rail then stops without acting.
   */
  save(state: RailState): Promise<void>;
}

export type RailOutcome =
  /** Money arrived (or is irrevocably on its way): mark COMPLETED. */
  | { kind: 'completed'; externalId: string; txHash?: string }
  /** Permanently refused: mark FAILED and refund the gross amount. */
  | { kind: 'failed'; reason: string; externalId?: string }
  /** Not final yet (unconfirmed, UNCLAIMED, ONHOLD, …): stay PROCESSING, look again later. */
  | { kind: 'pending'; externalId?: string }
  /**
   * `mayPay` said no, and nothing of this payout is moving or can move at the rail (nothing was
   * sent, or what was sent can provably never land): HELD, for the operator to release or cancel.
   */
  | { kind: 'held' };

export interface PayoutRail {
  /** Pays, or finds out what happened to an earlier attempt. Throws only on transient errors. */
  pay(instruction: PayoutInstruction, checkpoint: RailCheckpoint): Promise<RailOutcome>;
}
