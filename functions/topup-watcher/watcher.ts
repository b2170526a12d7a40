/**
 * The top-up watcher (docs/topups.md), scheduled on AWS and an interval in `npm start`. One run:
 *
 * 1. Reads the PENDING top-ups (sparse GSI1 entry, bounded by TOPUP_WATCH_MAX_PER_RUN), so its
 *    cost grows with the pending top-ups, never with the chain's history.
 * 2. USDC: for each, the signatures that carry its Solana Pay `reference`; each one `finalized`
 *    is read (`getTransaction`) and what it paid the deposit wallet's USDC token account is
 *    credited exactly, once per signature, in the transaction that completes the top-up. A second
 *    payment to a completed reference, or a foreign mint, is recorded unmatched. No finalized
 *    payment by `expiresAt` + grace → EXPIRED.
 * 3. USD: polls the PayPal order (the fallback for a missed or late webhook): see
 *    use-cases/topup-credit.ts `settlePaypalTopup`.
 * 4. Scans the deposit token account's new finalized signatures since a stored cursor (bounded
 *    by TOPUP_DEPOSIT_SCAN_MAX): a USDC payment that carries no reference of a pending top-up and
 *    was not credited (no reference, an unknown or expired one, a completed one) is recorded as
 *    UNMATCHED and alarmed — never dropped.
 *
 * Crash-safety: nothing is remembered between steps; every credit is one conditional
 * transaction keyed by the signature, so a run that dies anywhere, two runs at once, or the same
 * signature seen twice credit once. The cursor moves only after its signatures were handled.
 */
import { config } from '../config';
import type { Topup, UnmatchedReason, UsdcTopup } from '../core/topups';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { accountKeysOf, associatedTokenAddress, receivedBy, type SignatureInfo, SolanaDepositsClient } from '../rails/solana.deposits';
import { solanaRpcUrl } from '../rails/solana.json-rpc';
import {
  creditedAlready,
  expireTopup,
  findTopupBy,
  isUnmatchedRecorded,
  listPendingTopups,
  moveDepositCursor,
  readDepositCursor,
  recordUnmatched,
} from '../store/topup.repository';
import { creditOnce, EXPIRY_GRACE_MS, settlePaypalTopup, UNMATCHED_LOG_MESSAGE } from '../use-cases/topup-credit';

/** Signatures read per reference: a top-up is paid once; more are recorded, never lost (step 4). */
const SIGNATURES_PER_REFERENCE = 20;
const PAGE = 1_000;

export interface WatchReport {
  pending: number;
  completed: number;
  expired: number;
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
    const report: WatchReport = { pending: 0, completed: 0, expired: 0, unmatched: 0, scanned: 0, errors: 0, rpcCalls: 0 };
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

    /** Step 2 for one USDC top-up; returns whether it is still PENDING. */
    const watchReference = async (topup: UsdcTopup, deposit: string): Promise<boolean> => {
      const signatures = await solana.signaturesFor(topup.reference, { limit: SIGNATURES_PER_REFERENCE, commitment: 'confirmed' });
      let pending = true;
      let inFlight = false;
      for (const sig of [...signatures].reverse()) {
        if (sig.err) continue; // a failed transaction moved nothing
        if (sig.confirmationStatus !== 'finalized') {
          inFlight = true;
          continue;
        }
        const tx = await solana.finalizedTransaction(sig.signature);
        if (!tx) {
          inFlight = true;
          continue;
        }
        const received = receivedBy(tx, deposit);
        const usdc = received.get(mint) ?? 0n;
        for (const [other, amount] of received) if (other !== mint) await unmatched(sig, 'wrong mint', amount, other, topup);
        if (usdc <= 0n) continue;
        if (!pending) {
          await unmatched(sig, 'top-up already completed', usdc, mint, topup);
          continue;
        }
        await step('before-credit');
        const outcome = await creditOnce(topup, { rail: 'SOL', externalId: sig.signature, amount: Number(usdc), currency: 'USDC' }, now);
        if (outcome === 'credited') report.completed += 1;
        if (outcome === 'balance-limit') await unmatched(sig, 'balance limit', usdc, mint, topup);
        else pending = false; // credited now, before, or the top-up moved on
        if (outcome === 'not-pending') {
          // Completed by another payment, or expired, between the list and this credit.
          const current = await findTopupBy({ reference: topup.reference });
          await unmatched(sig, current?.status === 'EXPIRED' ? 'expired reference' : 'top-up already completed', usdc, mint, topup);
        }
      }
      if (pending && !inFlight && now.getTime() > Date.parse(topup.expiresAt) + EXPIRY_GRACE_MS && (await expireTopup(topup, now))) {
        report.expired += 1;
        return false;
      }
      return pending;
    };

    // Steps 1–3.
    const topups = await listPendingTopups(cfg.TOPUP_WATCH_MAX_PER_RUN);
    report.pending = topups.length;
    const stillPending = new Set<string>();
    for (const topup of topups) {
      try {
        if (topup.currency === 'USDC') {
          if (deposit && (await watchReference(topup, deposit))) stillPending.add(topup.reference);
        } else {
          const status = await settlePaypalTopup(topup, now);
          if (status === 'COMPLETED') report.completed += 1;
          if (status === 'EXPIRED') report.expired += 1;
        }
      } catch (error) {
        // One top-up's trouble (RPC down, PayPal 5xx) must not stop the others; the next run retries.
        report.errors += 1;
        logger().warn('top-up watch failed', { topupId: topup.id, error: serializeError(error) });
      }
    }

    if (deposit) await scanDeposits(deposit);
    report.rpcCalls = solana.calls - callsBefore;
    if (report.completed + report.expired + report.unmatched + report.errors > 0) logger().info('top-up watcher run', { ...report });
    return report;

    /** Step 4: the deposit token account since the cursor. */
    async function scanDeposits(deposit: string): Promise<void> {
      const account = associatedTokenAddress(deposit, mint);
      const cursor = await readDepositCursor(account);
      const fresh: SignatureInfo[] = [];
      let before: string | undefined;
      for (;;) {
        const limit = Math.min(PAGE, cfg.TOPUP_DEPOSIT_SCAN_MAX - fresh.length);
        if (limit <= 0) break;
        const page = await solana.signaturesFor(account, {
          limit,
          commitment: 'finalized',
          ...(cursor ? { until: cursor } : {}),
          ...(before ? { before } : {}),
        });
        fresh.push(...page);
        // Without a cursor (the first run) only the newest page: the history before is not ours to judge.
        if (page.length < limit || !cursor) break;
        before = page.at(-1)?.signature;
      }
      if (cursor && fresh.length >= cfg.TOPUP_DEPOSIT_SCAN_MAX) {
        logger().error('deposit scan truncated: raise TOPUP_DEPOSIT_SCAN_MAX or run the watcher more often', { scanned: fresh.length });
      }
      report.scanned = fresh.length;
      for (const sig of [...fresh].reverse()) {
        if (sig.err) continue;
        if (await creditedAlready('SOL', sig.signature)) continue;
        if (await isUnmatchedRecorded(sig.signature)) continue;
        const tx = await solana.finalizedTransaction(sig.signature);
        if (!tx) continue;
        const usdc = receivedBy(tx, deposit).get(mint) ?? 0n;
        if (usdc <= 0n) continue; // money going out (none should), or a transaction that paid nothing in
        const keys = accountKeysOf(tx);
        if (keys.some((key) => stillPending.has(key))) continue; // a pending top-up's: step 2 credits it
        const classified = await classify(keys, [deposit, account, mint]);
        if (classified === 'pending') continue;
        await unmatched(sig, classified.reason, usdc, mint, classified.topup);
      }
      const newest = fresh[0]?.signature;
      if (newest && newest !== cursor) {
        await step('before-cursor');
        await moveDepositCursor(account, cursor, newest, now);
      }
    }
  };
}

/** Why a USDC payment that step 2 did not take matched nothing: by the reference it carries, if any. */
async function classify(keys: string[], known: string[]): Promise<'pending' | { reason: UnmatchedReason; topup: Topup | undefined }> {
  for (const key of keys) {
    if (known.includes(key)) continue;
    const topup = await findTopupBy({ reference: key });
    if (!topup) continue;
    if (topup.status === 'PENDING') return 'pending'; // beyond this run's pending list: a later run's
    return { reason: topup.status === 'EXPIRED' ? 'expired reference' : 'top-up already completed', topup };
  }
  return { reason: 'no reference', topup: undefined };
}

function required(value: string | undefined, name: string): string {
  if (!value) throw new Error(`${name} is not set`);
  return value;
}
