/**
 * What the top-up watcher (topup-watch.ts) does with one finalized USDC payment to the deposit
 * wallet, whichever step found it (a top-up's reference history, or the deposit account's scan):
 * credited to the top-up it pays, once per signature, or recorded UNMATCHED and alarmed. Apart
 * from the run's walking of the chain so each file stays one job.
 */

import type { Topup, UnmatchedReason, UsdcTopup } from '../../core/topups';
import { logger } from '../../observability/logger';
import { TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE } from '../../observability/metric-names';
import type { SignatureInfo } from '../../rails/solana.deposits';
import { findTopupBy } from '../../store/topups/topup.repository';
import { recordUnmatched, transferCreditedAlready } from '../../store/topups/topup-watch.repository';
import { creditOnce, UNMATCHED_LOG_MESSAGE } from './topup-credit';

export interface WatchReport {
  pending: number;
  completed: number;
  expired: number;
  /** Top-ups ended FAILED (PayPal: another currency, or a capture pending too long). */
  failed: number;
  unmatched: number;
  scanned: number;
  errors: number;
  /** Solana JSON-RPC calls this run made (the bench's figure). */
  rpcCalls: number;
}

/** What a payment's settlement needs of the run: its clock, the USDC mint and minimum, its report and checkpoints. */
export interface PaymentRun {
  readonly now: Date;
  readonly mint: string;
  /** TOPUP_USDC_MIN_AMOUNT: the least a top-up that asked for no amount takes. */
  readonly minimum: number;
  readonly report: WatchReport;
  checkpoint(name: 'before-credit'): Promise<void>;
}

/**
 * What one finalized USDC payment to the deposit wallet does for `topup` (PENDING when read):
 * credited, or recorded unmatched when the top-up cannot take it. A top-up that asked for an
 * amount takes only exactly that amount; one that asked for none, at least TOPUP_USDC_MIN_AMOUNT:
 * anything else carrying its (public) reference is someone's stray or hostile transfer, and must
 * not use the top-up up before the payer's own deposit arrives. Returns whether the top-up is
 * still PENDING as far as this payment knows.
 */
export async function settleUsdcPayment(run: PaymentRun, topup: UsdcTopup, sig: SignatureInfo, usdc: bigint): Promise<boolean> {
  const refusal = refusedAmount(topup, usdc, run.minimum);
  if (refusal) {
    await unmatched(run, sig, refusal, usdc, run.mint, topup);
    return true;
  }
  await run.checkpoint('before-credit');
  const outcome = await creditOnce(topup, { rail: 'SOL', externalId: sig.signature, amount: Number(usdc), currency: 'USDC' }, run.now);
  if (outcome === 'credited') run.report.completed += 1;
  if (outcome === 'balance-limit') {
    await unmatched(run, sig, 'balance limit', usdc, run.mint, topup);
    return true;
  }
  if (outcome === 'credited-elsewhere') {
    // An x402 settlement credited this very transfer (its treasury is this deposit wallet, which
    // config load and synth refuse): accounted for, so no one's unmatched money; the top-up waits
    // for its payer's own transfer.
    logger().error(TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE, { rail: 'topup', signature: sig.signature, topupId: topup.id });
    return true;
  }
  if (outcome === 'not-pending') {
    // Completed by another payment, or expired, between the list and this credit.
    const current = await findTopupBy({ reference: topup.reference });
    await unmatched(run, sig, current?.status === 'EXPIRED' ? 'expired reference' : 'top-up already completed', usdc, run.mint, topup);
  }
  return false; // credited now, before, or the top-up moved on
}

/** A payment that credits no top-up: recorded once (unless it was credited after all) and alarmed. */
export async function unmatched(
  run: PaymentRun,
  sig: SignatureInfo,
  reason: UnmatchedReason,
  amount: bigint,
  paidMint: string,
  topup?: Topup,
): Promise<void> {
  if (await transferCreditedAlready(sig.signature)) return;
  const recorded = await recordUnmatched(
    {
      signature: sig.signature,
      reason,
      amount: amount.toString(),
      mint: paidMint,
      topupId: topup?.id,
      userId: topup?.userId,
      slot: sig.slot,
    },
    run.now,
  );
  if (recorded) {
    run.report.unmatched += 1;
    // The alarm's metric filter counts this line (lib/topup-watcher.ts).
    logger().error(UNMATCHED_LOG_MESSAGE, { rail: 'SOL', signature: sig.signature, reason, amount: amount.toString(), mint: paidMint });
  }
}

/** The top-up whose reference a payment carries (any status; the first found), if any. */
export async function topupReferencedBy(keys: string[], known: string[]): Promise<Topup | undefined> {
  for (const key of keys) {
    if (known.includes(key)) continue;
    const topup = await findTopupBy({ reference: key });
    if (topup) return topup;
  }
  return undefined;
}

/**
 * Why a transfer carrying a PENDING top-up's reference may not complete it, if it may not: not the
 * amount the top-up asked for, or (none asked for) less than the minimum.
 */
function refusedAmount(topup: UsdcTopup, received: bigint, minimum: number): UnmatchedReason | undefined {
  if (topup.requestedAmount !== undefined) return received === BigInt(topup.requestedAmount) ? undefined : 'wrong amount';
  return received < BigInt(minimum) ? 'below minimum' : undefined;
}

/** Why a USDC payment that credits no top-up matched nothing, by the top-up it referenced. */
export function unmatchedReason(topup: Topup | undefined): UnmatchedReason {
  if (!topup) return 'no reference';
  if (topup.status === 'COMPLETED') return 'top-up already completed';
  return topup.status === 'FAILED' ? 'top-up failed' : 'expired reference';
}
