/**
 * The top-up watcher's use case (docs/topups.md), scheduled on AWS and an interval in `npm start`
 * (functions/topup-watcher/handler.ts is only its wiring). One run, each step a method of WatchRun:
 *
 * 1. `listPending`: reads the PENDING top-ups (sparse GSI1 entry over 16 partitions and the legacy one, merged
 *    soonest expiry first, bounded by TOPUP_WATCH_MAX_PER_RUN), so its cost grows with the pending top-ups,
 *    never with the chain's history.
 * 2. `watchReference`, USDC: for each, the signatures that carry its Solana Pay `reference`, newer than its place
 *    (`scannedThrough`), page by page (`before`) until the history ends or is older than the
 *    top-up (at most TOPUP_REFERENCE_SCAN_MAX a run): anyone can send cheap transactions carrying
 *    a public reference, and they must not hide the payment. Oldest first, each one `finalized`
 *    is read (`getTransaction`) and what it paid the deposit wallet's USDC token account is
 *    credited exactly, once per signature, in the transaction that completes the top-up. A second
 *    payment to a completed reference, or a foreign mint, is recorded unmatched. The place moves
 *    only over resolved signatures, never past one still in flight. No finalized payment by
 *    `expiresAt` + grace, with the whole history read → EXPIRED.
 * 3. `watchPaypalOrder`, USD: polls the PayPal order (the fallback for a missed or late webhook): see
 *    topup-credit.ts `settlePaypalTopup`.
 * 4. `scanDeposits`: scans the deposit token account's new finalized signatures since a stored cursor (bounded
 *    by TOPUP_DEPOSIT_SCAN_MAX): every USDC payment not yet credited or recorded is settled here
 *    too — credited when it carries a pending top-up's reference (whatever step 2 managed),
 *    otherwise recorded as UNMATCHED (no reference, an expired or a completed one) and alarmed.
 *    The cursor moves only after all of them were handled, so none is ever passed over.
 *
 * Crash-safety: nothing is remembered between steps; every credit is one conditional
 * transaction keyed by the signature, so a run that dies anywhere, two runs at once, or the same
 * signature seen twice credit once. Both cursors move only after their signatures were handled.
 */
import { config } from '../../config';
import { isOnRail } from '../../core/money';
import type { Topup, UsdcTopup, UsdTopup } from '../../core/topups';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { accountKeysOf, associatedTokenAddress, receivedBy, type SignatureInfo, SolanaDepositsClient } from '../../rails/solana.deposits';
import { solanaRpcUrl } from '../../rails/solana.json-rpc';
import { listPendingTopups } from '../../store/topups/topup.repository';
import { expireTopup } from '../../store/topups/topup-completion.repository';
import {
  isUnmatchedRecorded,
  moveDepositCursor,
  moveReferenceCursor,
  readDepositCursor,
  transferCreditedAlready,
} from '../../store/topups/topup-watch.repository';
import { EXPIRY_GRACE_MS, settlePaypalTopup } from './topup-credit';
import {
  type PaymentRun,
  settleUsdcPayment,
  topupReferencedBy,
  unmatched,
  unmatchedReason,
  type WatchReport,
} from './topup-watch-payments';

/** getSignaturesForAddress's largest page (the node's limit). */
const PAGE = 1_000;
/** Pages of the deposit account listed per run, at most: reaching back to the cursor is what lets the oldest go first. */
const DEPOSIT_LIST_PAGES = 10;
/**
 * A signature whose block time is this much older than the top-up cannot carry its reference
 * (the reference did not exist yet); the slack covers the validators' clock against ours.
 */
const CLOCK_SLACK_SECONDS = 600;

export type { WatchReport } from './topup-watch-payments';

export interface WatcherOptions {
  /** The RPC client (tests count or fault it); default: SOLANA_RPC_URL or its secret. */
  solana?: SolanaDepositsClient;
  /** Called between the steps of a run (tests kill the run there: a crash between steps). */
  checkpoint?: (step: 'before-credit' | 'before-cursor') => Promise<void> | void;
  now?: () => Date;
  /** Signatures per page of a reference's history (default the node's 1,000; tests page smaller). */
  referencePageSize?: number;
}

/** The watcher: each call is one run (a fresh WatchRun, so nothing is remembered between runs). */
export function createWatcher(options: WatcherOptions = {}): () => Promise<WatchReport> {
  // async: a missing setting (USDC_MINT) rejects the run, as every other failure of it does.
  return async () => new WatchRun(options).run();
}

/** What one USDC top-up's reference history tells, while step 2 walks it oldest first. */
interface ReferenceWalk {
  topup: UsdcTopup;
  deposit: string;
  /** Still PENDING as far as this run knows. */
  pending: boolean;
  /** A payment seen that is not final yet (or its transaction not readable yet): not expired. */
  inFlight: boolean;
}

/** One run of the watcher: its configuration, clock, RPC client and report, and its steps. */
class WatchRun {
  private readonly cfg = config();
  private readonly solana: SolanaDepositsClient;
  private readonly callsBefore: number;
  private readonly now: Date;
  /** Until the operator sets the deposit wallet there are no USDC top-ups: PayPal only. */
  private readonly deposit: string | undefined;
  private readonly mint: string;
  /** What settling a payment needs of this run (topup-watch-payments.ts). */
  private readonly payments: PaymentRun;
  private readonly report: WatchReport = {
    pending: 0,
    completed: 0,
    expired: 0,
    failed: 0,
    unmatched: 0,
    scanned: 0,
    errors: 0,
    rpcCalls: 0,
  };

  constructor(private readonly options: WatcherOptions) {
    this.solana = options.solana ?? new SolanaDepositsClient(solanaRpcUrl);
    this.callsBefore = this.solana.calls;
    this.now = options.now?.() ?? new Date();
    this.deposit = this.cfg.SOLANA_DEPOSIT_ADDRESS;
    this.mint = required(this.cfg.USDC_MINT, 'USDC_MINT');
    this.payments = {
      now: this.now,
      mint: this.mint,
      minimum: this.cfg.TOPUP_USDC_MIN_AMOUNT,
      report: this.report,
      checkpoint: (name) => this.checkpoint(name),
    };
  }

  async run(): Promise<WatchReport> {
    const { report } = this;
    // Steps 1–3.
    const topups = await this.listPending();
    for (const topup of topups) {
      try {
        if (isOnRail(topup, 'solana')) {
          if (this.deposit) await this.watchReference(topup, this.deposit);
        } else {
          await this.watchPaypalOrder(topup);
        }
      } catch (error) {
        // One top-up's trouble (RPC down, PayPal 5xx) must not stop the others; the next run retries.
        report.errors += 1;
        logger().warn('top-up watch failed', { topupId: topup.id, error: serializeError(error) });
      }
    }
    // Step 4.
    if (this.deposit) {
      try {
        await this.scanDeposits(this.deposit);
      } catch (error) {
        // The cursor did not move: the next run handles the same signatures again.
        report.errors += 1;
        logger().warn('deposit scan failed', { error: serializeError(error) });
      }
    }
    report.rpcCalls = this.solana.calls - this.callsBefore;
    if (report.completed + report.expired + report.failed + report.unmatched + report.errors > 0)
      logger().info('top-up watcher run', { ...report });
    return report;
  }

  /** Step 1: the PENDING top-ups, at most TOPUP_WATCH_MAX_PER_RUN. */
  private async listPending(): Promise<Topup[]> {
    const topups = await listPendingTopups(this.cfg.TOPUP_WATCH_MAX_PER_RUN);
    this.report.pending = topups.length;
    return topups;
  }

  /** Step 3: a USD top-up's PayPal order, polled (the fallback for a missed or late webhook). */
  private async watchPaypalOrder(topup: UsdTopup): Promise<void> {
    const status = await settlePaypalTopup(topup, this.now);
    if (status === 'COMPLETED') this.report.completed += 1;
    if (status === 'EXPIRED') this.report.expired += 1;
    if (status === 'FAILED') this.report.failed += 1;
  }

  /** Step 2 for one USDC top-up; returns whether it is still PENDING. */
  private async watchReference(topup: UsdcTopup, deposit: string): Promise<boolean> {
    const { signatures, complete } = await this.referenceHistory(topup);
    if (!complete) {
      logger().error('reference scan truncated: raise TOPUP_REFERENCE_SCAN_MAX', { topupId: topup.id, read: signatures.length });
    }
    const walk: ReferenceWalk = { topup, deposit, pending: true, inFlight: false };
    // The place can move over the oldest signatures while each is resolved, and only if the
    // history below them was read whole.
    let resolvedThrough: string | undefined;
    let prefixResolved = complete;
    for (const sig of [...signatures].reverse()) {
      const resolved = await this.watchReferenceSignature(walk, sig);
      if (!resolved) prefixResolved = false;
      else if (prefixResolved) resolvedThrough = sig.signature;
    }
    if (walk.pending && resolvedThrough) await moveReferenceCursor(topup, resolvedThrough);
    // Expired only once its whole history was read and nothing in it is still on its way.
    const due = this.now.getTime() > Date.parse(topup.expiresAt) + EXPIRY_GRACE_MS;
    if (walk.pending && complete && !walk.inFlight && due && (await expireTopup(topup, this.now))) {
      this.report.expired += 1;
      return false;
    }
    return walk.pending;
  }

  /**
   * The signatures carrying `topup`'s reference that are newer than its place, newest first:
   * page by page until the history ends, reaches the place, or is older than the top-up.
   * `complete` is false when TOPUP_REFERENCE_SCAN_MAX stopped it first.
   */
  private async referenceHistory(topup: UsdcTopup): Promise<{ signatures: SignatureInfo[]; complete: boolean }> {
    const oldest = Date.parse(topup.createdAt) / 1000 - CLOCK_SLACK_SECONDS;
    const signatures: SignatureInfo[] = [];
    let before: string | undefined;
    for (;;) {
      const limit = Math.min(this.options.referencePageSize ?? PAGE, this.cfg.TOPUP_REFERENCE_SCAN_MAX - signatures.length);
      if (limit <= 0) return { signatures, complete: false };
      const page = await this.solana.signaturesFor(topup.reference, {
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
  }

  /** Step 2, one signature of a reference; true once nothing about it can change (it is final and acted on). */
  private async watchReferenceSignature(walk: ReferenceWalk, sig: SignatureInfo): Promise<boolean> {
    const final = sig.confirmationStatus === 'finalized';
    if (sig.err) return final; // a failed transaction moved nothing
    if (!final) {
      walk.inFlight = true;
      return false;
    }
    const tx = await this.solana.finalizedTransaction(sig.signature);
    if (!tx) {
      walk.inFlight = true;
      return false;
    }
    const received = receivedBy(tx, walk.deposit);
    const usdc = received.get(this.mint) ?? 0n;
    for (const [other, amount] of received)
      if (other !== this.mint) await unmatched(this.payments, sig, 'wrong mint', amount, other, walk.topup);
    if (usdc <= 0n) return true;
    if (!walk.pending) {
      await unmatched(this.payments, sig, 'top-up already completed', usdc, this.mint, walk.topup);
      return true;
    }
    walk.pending = await settleUsdcPayment(this.payments, walk.topup, sig, usdc);
    return true;
  }

  /** Step 4: the deposit token account since the cursor. */
  private async scanDeposits(deposit: string): Promise<void> {
    const account = associatedTokenAddress(deposit, this.mint);
    const cursor = await readDepositCursor(account);
    const { fresh, reachedCursor } = await this.depositSignatures(account, cursor);
    // Reading transactions is what costs: at most TOPUP_DEPOSIT_SCAN_MAX a run, oldest first.
    const todo = [...fresh].reverse().slice(0, this.cfg.TOPUP_DEPOSIT_SCAN_MAX);
    if (!reachedCursor || todo.length < fresh.length) {
      logger().error('deposit scan truncated: raise TOPUP_DEPOSIT_SCAN_MAX or run the watcher more often', {
        listed: fresh.length,
        handled: todo.length,
        reachedCursor,
      });
    }
    this.report.scanned = todo.length;
    // The cursor moves over the oldest signatures while each is resolved, never past one that
    // is not (its transaction unreadable yet), and only from a history read down to the cursor.
    let resolvedThrough: string | undefined;
    let prefixResolved = reachedCursor;
    for (const sig of todo) {
      const resolved = await this.scanDepositSignature(sig, deposit, account);
      if (!resolved) prefixResolved = false;
      else if (prefixResolved) resolvedThrough = sig.signature;
    }
    if (resolvedThrough && resolvedThrough !== cursor) {
      await this.checkpoint('before-cursor');
      await moveDepositCursor(account, cursor, resolvedThrough, this.now);
    }
  }

  /** Step 4's listing: the deposit account's finalized signatures since the cursor, newest first. */
  private async depositSignatures(
    account: string,
    cursor: string | undefined,
  ): Promise<{ fresh: SignatureInfo[]; reachedCursor: boolean }> {
    // Listing is cheap (a thousand a call): back to the cursor, so the oldest are handled first.
    const fresh: SignatureInfo[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < DEPOSIT_LIST_PAGES; pages++) {
      const page = await this.solana.signaturesFor(account, {
        limit: PAGE,
        commitment: 'finalized',
        ...(cursor ? { until: cursor } : {}),
        ...(before ? { before } : {}),
      });
      fresh.push(...page);
      // Without a cursor (the first run) only the newest page: the history before is not ours to judge.
      if (page.length < PAGE || !cursor) return { fresh, reachedCursor: true };
      before = page.at(-1)?.signature;
    }
    return { fresh, reachedCursor: false };
  }

  /** Step 4, one deposit signature: credited or recorded; true once it is handled for good. */
  private async scanDepositSignature(sig: SignatureInfo, deposit: string, account: string): Promise<boolean> {
    if (sig.err) return true; // listed at finalized: a failed transaction moved nothing
    // Credited by any rail (a top-up, or an x402 settlement if this wallet were also the treasury).
    if (await transferCreditedAlready(sig.signature)) return true;
    if (await isUnmatchedRecorded(sig.signature)) return true;
    const tx = await this.solana.finalizedTransaction(sig.signature);
    if (!tx) return false;
    const usdc = receivedBy(tx, deposit).get(this.mint) ?? 0n;
    if (usdc <= 0n) return true; // money going out (none should), or a transaction that paid nothing in
    const topup = await topupReferencedBy(accountKeysOf(tx), [deposit, account, this.mint]);
    // A pending top-up's payment that step 2 did not credit (its history unreadable this run,
    // or the top-up beyond this run's list): credited here, never passed over.
    if (topup?.status === 'PENDING' && isOnRail(topup, 'solana')) await settleUsdcPayment(this.payments, topup, sig, usdc);
    else await unmatched(this.payments, sig, unmatchedReason(topup), usdc, this.mint, topup);
    return true;
  }

  /** Between the steps of a run (tests kill the run there: a crash between steps). */
  private async checkpoint(name: 'before-credit' | 'before-cursor'): Promise<void> {
    await this.options.checkpoint?.(name);
  }
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is not set`);
  return value;
}
