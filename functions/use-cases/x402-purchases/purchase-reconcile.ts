/**
 * Signed x402 purchases ended by the chain (DESIGN §22, §24; docs/x402.md "How far the reconciler
 * searches"): the reconciler's sweep, and the operator's resolve of one the sweep cannot reach. Both
 * read the finalized height first, then search the hot wallet token account's history, and end a
 * purchase only as the receipt does (purchase-endings.ts), by the verdict of core/purchases.ts
 * `judgeSearch`.
 *
 * No head of line. A run reads every purchase that is due (the reconciler's queue, sorted by when
 * each is next due, read in pages up to now), searches the chain once for a batch of them (newest
 * first, so a fresh transfer is found on the first page however deep others are buried), and ends
 * what the search decides. A purchase past its blockhash that the search could not reach back for
 * is `unsearched`: it waits (1 min, doubling to 1 h) before it is due again, so buried purchases
 * cost a deep search at most once per wait each and never take another's turn. Each run stops
 * cleanly at its deadline; what it did not reach stays due for the next.
 */
import type { Charge } from '../../core/charges';
import { isId } from '../../core/ids';
import { chargeIdOfPurchase, judgeSearch, nextSearchBackoff, type SearchVerdict, type SignedPurchase } from '../../core/purchases';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { getCharge, getChargeById } from '../../store/charges/charge-read.repository';
import {
  countUnsearchedPurchases,
  type DueCursor,
  deferPurchaseSearch,
  listDuePurchases,
  type SignedPending,
} from '../../store/x402-purchases/purchase.repository';
import type { LandedSearch, PurchaseChain } from '../../x402/purchase-chain';
import { capture, type Ended, expire } from './purchase-endings';

/** Due purchases read per Query. */
const PAGE_SIZE = 100;
/** Purchases searched for together: one pass over the account's history serves them all. */
const SEARCH_BATCH = 500;
/** Charges read at once while a batch is gathered. */
const READ_CONCURRENCY = 16;
/** About what ending one purchase takes (one transaction, one read back), kept in hand after a batch's search. */
const ONE_ENDING_MS = 50;

export interface PurchaseReconcileReport {
  /** Due purchases still PENDING with a signed payment that this run judged. */
  checked: number;
  captured: number;
  expired: number;
  /**
   * Purchases past their blockhash whose search has not reached back to where their transfer could
   * be: those this run could not reach and those waiting out an earlier run's backoff (the
   * X402PurchasesUnsearched gauge). Their holds wait for a search that reaches them, the agent's
   * receipt, or the operator's resolve-purchase.
   */
  unsearched: number;
  /** This run's unsearched, each now waiting out its backoff before it is due again. */
  deferred: number;
  /** The run's deadline came first: the due purchases it did not reach are the next run's. */
  outOfTime?: true;
}

export interface PurchaseSweepOptions {
  /** The run's clock: what is due is due by then, and backoffs count from it. */
  now?: Date;
  /** Epoch ms after which the sweep starts nothing more (the Lambda's time, shared among the reconciler's sweeps). */
  deadline?: number;
  /** Due purchases read per Query (100). */
  pageSize?: number;
  /** Signatures one search reads at most (x402/purchase-signer.ts MAX_SEARCHED_SIGNATURES). */
  maxSignatures?: number;
}

interface Queued {
  queued: SignedPending;
  charge: Charge & { purchase: { signed: SignedPurchase } };
}

/**
 * The reconciler's pass over signed purchases still PENDING: every due one, batch by batch (the
 * finalized block height, then one search of the hot wallet token account for the batch), each
 * captured (or released, when it failed there) when its transfer is there, released when its
 * blockhash expired at that height and the search read back past it, deferred when it could not,
 * and left for the next run while its payment may still land.
 */
export async function reconcilePurchases(chain: PurchaseChain, opts: PurchaseSweepOptions = {}): Promise<PurchaseReconcileReport> {
  const now = opts.now ?? new Date();
  const report: PurchaseReconcileReport = { checked: 0, captured: 0, expired: 0, unsearched: 0, deferred: 0 };
  const late = () => opts.deadline !== undefined && Date.now() >= opts.deadline;
  let after: DueCursor | undefined;
  do {
    if (late()) {
      report.outOfTime = true;
      break;
    }
    const batch = await gatherDue(now, after, opts.pageSize ?? PAGE_SIZE, late);
    after = batch.next;
    if (batch.items.length > 0) await sweepBatch(chain, batch.items, now, opts, report, late);
  } while (after !== undefined && !report.outOfTime);
  // Counted over the whole queue, not this run's share: a buried purchase is due once an hour at most.
  report.unsearched = await countUnsearchedPurchases();
  return report;
}

/** Up to SEARCH_BATCH due purchases from `after`, each with its charge (those settled meanwhile left out). */
async function gatherDue(now: Date, after: DueCursor | undefined, pageSize: number, late: () => boolean) {
  const queued: SignedPending[] = [];
  let next = after;
  do {
    const page = await listDuePurchases(now, { limit: pageSize, ...(next ? { after: next } : {}) });
    queued.push(...page.due);
    next = page.next;
  } while (next !== undefined && queued.length < SEARCH_BATCH && !late());
  const items: Queued[] = [];
  for (let i = 0; i < queued.length; i += READ_CONCURRENCY) {
    const slice = queued.slice(i, i + READ_CONCURRENCY);
    const charges = await Promise.all(slice.map((q) => getCharge(q.agentId, q.chargeId)));
    slice.forEach((q, k) => {
      const charge = charges[k];
      if (charge?.status === 'PENDING' && charge.purchase?.signed) items.push({ queued: q, charge: charge as Queued['charge'] });
    });
  }
  return { items, next };
}

async function sweepBatch(
  chain: PurchaseChain,
  items: readonly Queued[],
  now: Date,
  opts: PurchaseSweepOptions,
  report: PurchaseReconcileReport,
  late: () => boolean,
): Promise<void> {
  // The height first: a transfer that landed by then is on the history the search reads after it.
  const tip = await chain.finalizedTip();
  const search = await chain.findLanded(
    items.map((i) => i.charge.purchase.signed),
    {
      minContextSlot: tip.slot,
      ...(opts.deadline !== undefined ? { stopAt: searchStop(opts.deadline, items.length) } : {}),
      ...(opts.maxSignatures !== undefined ? { maxSignatures: opts.maxSignatures } : {}),
    },
  );
  // Endings first, deferrals last: a batch's buried purchases (due first, being the oldest due) never
  // spend the sweep's time before a fresh transfer it found is captured.
  const judged = items
    .map((item) => ({ ...item, ...verdictOf(item.charge.purchase.signed, search, tip.height) }))
    .sort((a, b) => VERDICT_ORDER[a.verdict] - VERDICT_ORDER[b.verdict]);
  for (const { queued, charge, verdict, landed } of judged) {
    if (late()) {
      report.outOfTime = true;
      return;
    }
    report.checked += 1;
    try {
      if (verdict === 'capture' || verdict === 'release') {
        const ended = await endBy(verdict, charge, landed);
        // Counted by the run whose ending committed: one that lost to a receipt or the operator saw it done.
        if (ended.won && ended.charge.status === 'SUCCESS') report.captured += 1;
        else if (ended.won) report.expired += 1;
      } else if (verdict === 'unsearched') {
        // Released, the payer could get back USDC that already left: it waits, and lets the others go first.
        const backoff = nextSearchBackoff(queued.searchBackoffSeconds);
        if (await deferPurchaseSearch(queued, backoff, now)) report.deferred += 1;
        logger().warn('x402 purchase past its blockhash, its transfer not searched for far enough back', {
          chargeId: charge.id,
          nextSearchInSeconds: backoff,
        });
      }
    } catch (error) {
      // One purchase's failure does not hold up the others: it stays due for the next run.
      logger().error('x402 purchase reconcile failed', { chargeId: charge.id, error });
    }
  }
}

const VERDICT_ORDER: Readonly<Record<SearchVerdict, number>> = { capture: 0, release: 1, unsearched: 2, 'in-flight': 3 };

/**
 * When a batch's search stops so that what it found is still ended before the deadline: a search
 * cut short by a slow RPC (or by candidates spammed with a purchase's memo) must not leave every run
 * with no time to capture the fresh transfers it found first.
 */
function searchStop(deadline: number, batch: number): number {
  return deadline - Math.min((deadline - Date.now()) / 2, batch * ONE_ENDING_MS);
}

function verdictOf(signed: SignedPurchase, search: LandedSearch, finalizedHeight: number) {
  const landed = search.found.get(signed.authoritySignature);
  const verdict: SearchVerdict = judgeSearch({
    landed,
    finalizedHeight,
    lastValidBlockHeight: signed.lastValidBlockHeight,
    covered: search.covered.has(signed.authoritySignature),
  });
  return { verdict, landed };
}

/** Captured under the transaction it landed as; released otherwise (failed on chain, or past its blockhash and not there). */
function endBy(verdict: 'capture' | 'release', charge: Charge, landed: { transaction: string } | undefined): Promise<Ended> {
  return verdict === 'capture' && landed ? capture(charge, landed.transaction) : expire(charge);
}

/** What the operator's resolve did. */
export interface ResolvedPurchase {
  /** `captured`: its transfer was found; `released`: it can no longer land and did not. */
  resolved: 'captured' | 'released';
  purchase: Charge;
  /** The hot wallet token account's signatures the search read. */
  signaturesRead: number;
}

/**
 * `npm run admin -- resolve-purchase <id>` (docs/operator-cli.md): settles one signed purchase
 * still PENDING whatever buries it, by a search of the hot wallet token account's whole history
 * (back to where its transfer could be, with no limit on how many signatures): captured when its
 * transfer is there, released when its blockhash is past at `finalized` and it is not. The same
 * transaction as the reconciler's (purchase-endings.ts), so the ledger audit reads it alike, and
 * exactly once: racing the reconciler or a receipt, one ending commits and the other is told the
 * purchase already ended. Refuses a purchase that is not PENDING with a signed payment, one whose
 * payment may still land, and a search that could not read a candidate.
 */
export async function resolvePurchase(id: string, chain: PurchaseChain): Promise<ResolvedPurchase> {
  // The purchase's id (`xp…`) or its hold's (`c…`, as the reconciler's log lines name it).
  const chargeId = chargeIdOfPurchase(id) ?? id;
  const charge = isId('charge', chargeId) ? await getChargeById(chargeId) : undefined;
  if (!charge?.purchase) throw refuse('purchaseNotFound');
  if (charge.status !== 'PENDING') throw refuse('purchaseEnded', charge.status);
  const signed = charge.purchase.signed;
  if (!signed) throw refuse('purchaseNotSigned');
  const tip = await chain.finalizedTip();
  const search = await chain.findLanded([signed], { minContextSlot: tip.slot, maxSignatures: Number.POSITIVE_INFINITY });
  const { verdict, landed } = verdictOf(signed, search, tip.height);
  if (verdict === 'in-flight') throw refuse('purchaseMayStillLand', tip.height, signed.lastValidBlockHeight);
  if (verdict === 'unsearched') throw refuse('purchaseSearchIncomplete');
  const ended = await endBy(verdict, charge, landed);
  if (!ended.won) throw refuse('purchaseEnded', ended.charge.status);
  return {
    resolved: ended.charge.status === 'SUCCESS' ? 'captured' : 'released',
    purchase: ended.charge,
    signaturesRead: search.read,
  };
}
