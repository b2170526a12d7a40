/**
 * The top-up watcher (docs/topups.md), scheduled on AWS and an interval in `npm start`. One run:
 *
 * 1. Reads the PENDING top-ups (sparse GSI1 entry, bounded by TOPUP_WATCH_MAX_PER_RUN), so its
 *    cost grows with the pending top-ups, never with the chain's history.
 * 2. USDC: for each, the signatures that carry its Solana Pay `reference`, newer than its place
 *    (`scannedThrough`), page by page (`before`) until the history ends or is older than the
 *    top-up (at most TOPUP_REFERENCE_SCAN_MAX a run): anyone can send cheap transactions carrying
 *    a public reference, and they must not hide the payment. Oldest first, each one `finalized`
 *    is read (`getTransaction`) and what it paid the deposit wallet's USDC token account is
 *    credited exactly, once per signature, in the transaction that completes the top-up. A second
 *    payment to a completed reference, or a foreign mint, is recorded unmatched. The place moves
 *    only over resolved signatures, never past one still in flight. No finalized payment by
 *    `expiresAt` + grace, with the whole history read → EXPIRED.
 * 3. USD: polls the PayPal order (the fallback for a missed or late webhook): see
 *    use-cases/topup-credit.ts `settlePaypalTopup`.
 * 4. Scans the deposit token account's new finalized signatures since a stored cursor (bounded
 *    by TOPUP_DEPOSIT_SCAN_MAX): every USDC payment not yet credited or recorded is settled here
 *    too — credited when it carries a pending top-up's reference (whatever step 2 managed),
 *    otherwise recorded as UNMATCHED (no reference, an expired or a completed one) and alarmed.
 *    The cursor moves only after all of them were handled, so none is ever passed over.
 *
 * Crash-safety: nothing is remembered between steps; every credit is one conditional
 * transaction keyed by the signature, so a run that dies anywhere, two runs at once, or the same
 * signature seen twice credit once. Both cursors move only after their signatures were handled.
 */
import { config } from '../config';
import type { Topup, UnmatchedReason, UsdcTopup } from '../core/topups';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { accountKeysOf, associatedTokenAddress, receivedBy, type SignatureInfo, SolanaDepositsClient } from '../rails/solana.deposits';
import { solanaRpcUrl } from '../rails/solana.json-rpc';
import { findTopupBy, listPendingTopups } from '../store/topup.repository';
import { expireTopup } from '../store/topup-completion.repository';
import {
  creditedAlready,
  isUnmatchedRecorded,
  moveDepositCursor,
  moveReferenceCursor,
  readDepositCursor,
  recordUnmatched,
} from '../store/topup-watch.repository';
import { creditOnce, EXPIRY_GRACE_MS, settlePaypalTopup, UNMATCHED_LOG_MESSAGE } from '../use-cases/topup-credit';

/** getSignaturesForAddress's largest page (the node's limit). */
const PAGE = 1_000;
/** Pages of the deposit account listed per run, at most: reaching back to the cursor is what lets the oldest go first. */
const DEPOSIT_LIST_PAGES = 10;
/**
 * A signature whose block time is this much older than the top-up cannot carry its reference
 * (the reference did not exist yet); the slack covers the validators' clock against ours.
 */
const CLOCK_SLACK_SECONDS = 600;

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

export interface WatcherOptions {
  /** The RPC client (tests count or fault it); default: SOLANA_RPC_URL or its secret. */
  solana?: SolanaDepositsClient;
  /** Called between the steps of a run (tests kill the run there: a crash between steps). */
  checkpoint?: (step: 'before-credit' | 'before-cursor') => Promise<void> | void;
  now?: () => Date;
  /** Signatures per page of a reference's history (default the node's 1,000; tests page smaller). */
  referencePageSize?: number;
}

export function createWatcher(options: WatcherOptions = {}) {
  return async function watch(): Promise<WatchReport> {
    const cfg = config();
    const solana = options.solana ?? new SolanaDepositsClient(solanaRpcUrl);
    const callsBefore = solana.calls;
    const now = options.now?.() ?? new Date();
    // Until the operator sets the deposit wallet there are no USDC top-ups: PayPal only.
    const deposit = cfg.SOLANA_DEPOSIT_ADDRESS;
    const mint = required(cfg.USDC_MINT, 'USDC_MINT');
    const report: WatchReport = { pending: 0, completed: 0, expired: 0, failed: 0, unmatched: 0, scanned: 0, errors: 0, rpcCalls: 0 };
    const step = async (name: 'before-credit' | 'before-cursor') => options.checkpoint?.(name);

    const unmatched = async (sig: SignatureInfo, reason: UnmatchedReason, amount: bigint, paidMint: string, topup?: Topup) => {
      if (await creditedAlready('SOL', sig.signature)) return;
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
        now,
      );
      if (recorded) {
        report.unmatched += 1;
        // The alarm's metric filter counts this line (lib/topup-watcher.ts).
        logger().error(UNMATCHED_LOG_MESSAGE, { rail: 'SOL', signature: sig.signature, reason, amount: amount.toString(), mint: paidMint });
      }
    };

    /**
     * What one finalized USDC payment to the deposit wallet does for `topup` (PENDING when read):
     * credited, or recorded unmatched when the top-up can no longer take it. Returns whether the
     * top-up is still PENDING as far as this payment knows.
     */
    const settleUsdcPayment = async (topup: UsdcTopup, sig: SignatureInfo, usdc: bigint): Promise<boolean> => {
      await step('before-credit');
      const outcome = await creditOnce(topup, { rail: 'SOL', externalId: sig.signature, amount: Number(usdc), currency: 'USDC' }, now);
      if (outcome === 'credited') report.completed += 1;
      if (outcome === 'balance-limit') {
        await unmatched(sig, 'balance limit', usdc, mint, topup);
        return true;
      }
      if (outcome === 'not-pending') {
        // Completed by another payment, or expired, between the list and this credit.
        const current = await findTopupBy({ reference: topup.reference });
        await unmatched(sig, current?.status === 'EXPIRED' ? 'expired reference' : 'top-up already completed', usdc, mint, topup);
      }
      return false; // credited now, before, or the top-up moved on
    };

    /**
     * The signatures carrying `topup`'s reference that are newer than its place, newest first:
     * page by page until the history ends, reaches the place, or is older than the top-up.
     * `complete` is false when TOPUP_REFERENCE_SCAN_MAX stopped it first.
     */
    const referenceHistory = async (topup: UsdcTopup): Promise<{ signatures: SignatureInfo[]; complete: boolean }> => {
      const oldest = Date.parse(topup.createdAt) / 1000 - CLOCK_SLACK_SECONDS;
      const signatures: SignatureInfo[] = [];
      let before: string | undefined;
      for (;;) {
        const limit = Math.min(options.referencePageSize ?? PAGE, cfg.TOPUP_REFERENCE_SCAN_MAX - signatures.length);
        if (limit <= 0) return { signatures, complete: false };
        const page = await solana.signaturesFor(topup.reference, {
          limit,
          commitment: 'confirmed',
          ...(topup.scannedThrough ? { until: topup.scannedThrough } : {}),
          ...(before ? { before } : {}),
        });
        const young = page.filter((sig) => typeof sig.blockTime !== 'number' || sig.blockTime >= oldest);
        signatures.push(...young);
        if (page.length < limit || young.length < page.length) return { signatures, complete: true };
        before = page.at(-1)?.signature;
      }
    };

    /** Step 2 for one USDC top-up; returns whether it is still PENDING. */
    const watchReference = async (topup: UsdcTopup, deposit: string): Promise<boolean> => {
      const { signatures, complete } = await referenceHistory(topup);
      if (!complete) {
        logger().error('reference scan truncated: raise TOPUP_REFERENCE_SCAN_MAX', { topupId: topup.id, read: signatures.length });
      }
      let pending = true;
      let inFlight = false;
      // The place can move over the oldest signatures while each is resolved, and only if the
      // history below them was read whole.
      let resolvedThrough: string | undefined;
      let prefixResolved = complete;
      for (const sig of [...signatures].reverse()) {
        const resolved = await watchSignature(sig);
        if (!resolved) prefixResolved = false;
        else if (prefixResolved) resolvedThrough = sig.signature;
      }
      if (pending && resolvedThrough) await moveReferenceCursor(topup, resolvedThrough);
      // Expired only once its whole history was read and nothing in it is still on its way.
      const due = now.getTime() > Date.parse(topup.expiresAt) + EXPIRY_GRACE_MS;
      if (pending && complete && !inFlight && due && (await expireTopup(topup, now))) {
        report.expired += 1;
        return false;
      }
      return pending;

      /** Handles one signature; true once nothing about it can change (it is final and acted on). */
      async function watchSignature(sig: SignatureInfo): Promise<boolean> {
        const final = sig.confirmationStatus === 'finalized';
        if (sig.err) return final; // a failed transaction moved nothing
        if (!final) {
          inFlight = true;
          return false;
        }
        const tx = await solana.finalizedTransaction(sig.signature);
        if (!tx) {
          inFlight = true;
          return false;
        }
        const received = receivedBy(tx, deposit);
        const usdc = received.get(mint) ?? 0n;
        for (const [other, amount] of received) if (other !== mint) await unmatched(sig, 'wrong mint', amount, other, topup);
        if (usdc <= 0n) return true;
        if (!pending) {
          await unmatched(sig, 'top-up already completed', usdc, mint, topup);
          return true;
        }
        pending = await settleUsdcPayment(topup, sig, usdc);
        return true;
      }
    };

    // Steps 1–3.
    const topups = await listPendingTopups(cfg.TOPUP_WATCH_MAX_PER_RUN);
    report.pending = topups.length;
    for (const topup of topups) {
      try {
        if (topup.currency === 'USDC') {
          if (deposit) await watchReference(topup, deposit);
        } else {
          const status = await settlePaypalTopup(topup, now);
          if (status === 'COMPLETED') report.completed += 1;
          if (status === 'EXPIRED') report.expired += 1;
          if (status === 'FAILED') report.failed += 1;
        }
      } catch (error) {
        // One top-up's trouble (RPC down, PayPal 5xx) must not stop the others; the next run retries.
        report.errors += 1;
        logger().warn('top-up watch failed', { topupId: topup.id, error: serializeError(error) });
      }
    }

    if (deposit) {
      try {
        await scanDeposits(deposit);
      } catch (error) {
        // The cursor did not move: the next run handles the same signatures again.
        report.errors += 1;
        logger().warn('deposit scan failed', { error: serializeError(error) });
      }
    }
    report.rpcCalls = solana.calls - callsBefore;
    if (report.completed + report.expired + report.failed + report.unmatched + report.errors > 0)
      logger().info('top-up watcher run', { ...report });
    return report;

    /** Step 4: the deposit token account since the cursor. */
    async function scanDeposits(deposit: string): Promise<void> {
      const account = associatedTokenAddress(deposit, mint);
      const cursor = await readDepositCursor(account);
      // Listing is cheap (a thousand a call): back to the cursor, so the oldest are handled first.
      const fresh: SignatureInfo[] = [];
      let before: string | undefined;
      let reachedCursor = false;
      for (let pages = 0; pages < DEPOSIT_LIST_PAGES; pages++) {
        const page = await solana.signaturesFor(account, {
          limit: PAGE,
          commitment: 'finalized',
          ...(cursor ? { until: cursor } : {}),
          ...(before ? { before } : {}),
        });
        fresh.push(...page);
        // Without a cursor (the first run) only the newest page: the history before is not ours to judge.
        if (page.length < PAGE || !cursor) {
          reachedCursor = true;
          break;
        }
        before = page.at(-1)?.signature;
      }
      // Reading transactions is what costs: at most TOPUP_DEPOSIT_SCAN_MAX a run, oldest first.
      const todo = [...fresh].reverse().slice(0, cfg.TOPUP_DEPOSIT_SCAN_MAX);
      if (!reachedCursor || todo.length < fresh.length) {
        logger().error('deposit scan truncated: raise TOPUP_DEPOSIT_SCAN_MAX or run the watcher more often', {
          listed: fresh.length,
          handled: todo.length,
          reachedCursor,
        });
      }
      report.scanned = todo.length;
      // The cursor moves over the oldest signatures while each is resolved, never past one that
      // is not (its transaction unreadable yet), and only from a history read down to the cursor.
      let resolvedThrough: string | undefined;
      let prefixResolved = reachedCursor;
      for (const sig of todo) {
        const resolved = await scanSignature(sig);
        if (!resolved) prefixResolved = false;
        else if (prefixResolved) resolvedThrough = sig.signature;
      }
      if (resolvedThrough && resolvedThrough !== cursor) {
        await step('before-cursor');
        await moveDepositCursor(account, cursor, resolvedThrough, now);
      }

      /** Credits or records one deposit signature; true once it is handled for good. */
      async function scanSignature(sig: SignatureInfo): Promise<boolean> {
        if (sig.err) return true; // listed at finalized: a failed transaction moved nothing
        if (await creditedAlready('SOL', sig.signature)) return true;
        if (await isUnmatchedRecorded(sig.signature)) return true;
        const tx = await solana.finalizedTransaction(sig.signature);
        if (!tx) return false;
        const usdc = receivedBy(tx, deposit).get(mint) ?? 0n;
        if (usdc <= 0n) return true; // money going out (none should), or a transaction that paid nothing in
        const topup = await topupReferencedBy(accountKeysOf(tx), [deposit, account, mint]);
        // A pending top-up's payment that step 2 did not credit (its history unreadable this run,
        // or the top-up beyond this run's list): credited here, never passed over.
        if (topup?.status === 'PENDING' && topup.currency === 'USDC') await settleUsdcPayment(topup, sig, usdc);
        else await unmatched(sig, unmatchedReason(topup), usdc, mint, topup);
        return true;
      }
    }
  };
}

/** The top-up whose reference a payment carries (any status; the first found), if any. */
async function topupReferencedBy(keys: string[], known: string[]): Promise<Topup | undefined> {
  for (const key of keys) {
    if (known.includes(key)) continue;
    const topup = await findTopupBy({ reference: key });
    if (topup) return topup;
  }
  return undefined;
}

/** Why a USDC payment that credits no top-up matched nothing, by the top-up it referenced. */
function unmatchedReason(topup: Topup | undefined): UnmatchedReason {
  if (!topup) return 'no reference';
  if (topup.status === 'COMPLETED') return 'top-up already completed';
  return topup.status === 'FAILED' ? 'top-up failed' : 'expired reference';
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is not set`);
  return value;
}
