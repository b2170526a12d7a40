/**
 * The audit of money that moves on chain (docs/topups.md "The audit reconciles the wallets"). Pure
 * functions over ledger rows and what the chain says; functions/audit/wallet-audit.ts reads the
 * chain, ledger-audit.ts runs them with the rest.
 *
 * 1. **One credit per transfer** (`chainCreditProblems`, the table alone): no Solana signature is
 *    credited both to a top-up (`TOPUPCREDIT#SOL#<signature>`) and to an agent by x402 (a CREDITED
 *    `X402TX#<messageHash>`), and each cross-rail guard (`CHAINCREDIT#<signature>`) stands for the
 *    credit of its rail, of its amount. (Credits made before the guard existed have none: no fault.)
 *
 * 2. **The wallets against the ledger, transfer by transfer** (`reconcileWallets`). The wallets are
 *    the hot wallet (pays USDC payouts), the deposit wallet (receives top-ups) and the x402 treasury
 *    (receives x402 payments; the hot wallet by default). Every transaction in the history of their
 *    USDC token accounts is read, and what it did to them (`net`, the sum of their balance changes)
 *    must be explained by the ledger:
 *      - a USDC payout's transaction (its signature on the payout, COMPLETED or in flight): `net` is
 *        minus the payout's net amount;
 *      - a credited transfer (a top-up's, an x402 settlement's): `net` is what the ledger credited
 *        for that signature, all rails together (a transfer credited twice is caught here too);
 *      - an x402 payment whose settlement is still PENDING, or a payment recorded unmatched: in, and
 *        reported (owed to an agent, or for the operator to refund);
 *      - `net` = 0: a transfer between the wallets, a failed transaction, nothing moved;
 *      - anything else that brought money in: **reported, not a failure** — the operator's funding
 *        of the float, a buyer paying the treasury without settling, a deposit the watcher has not
 *        seen yet;
 *      - anything else that took money out: **a failure** (a drained wallet), unless all of it went
 *        to a wallet the operator names as their own (a sweep to cold storage: `--operator-wallet`).
 *    And the other way: every transfer the ledger credited, and every COMPLETED USDC payout, is in
 *    that history. Each wallet's balance equals the sum of what its history did to it (a history
 *    the node no longer serves whole cannot vouch for anything, and says so). So, over the wallets:
 *
 *      on chain = funding + top-ups + x402 + x402 pending + unmatched − payouts − x402 purchases − to operator wallets
 *
 *    (a captured x402 purchase's transaction — its signature on the purchase — took exactly its
 *    amount out of the hot wallet to the seller; docs/x402.md "The hot wallet's USDC").
 *
 *    where each term is a sum of classified transfers, and every failure names its transaction.
 */
import { formatAmount, isCurrencyOn, type Minor } from '../core/money';
import type { X402SettlementRow } from '../store/audit/ledger-rows.chain';
import type { ChargeRow } from '../store/audit/ledger-rows.charges';
import type { LedgerRows } from '../store/audit/ledger-rows.mapper';
import type { PayoutRow } from '../store/audit/ledger-rows.payouts';

export type WalletRole = 'hot wallet' | 'deposit wallet' | 'x402 treasury';

/** One wallet the service holds USDC in, as the chain shows it. */
export interface AuditedWallet {
  address: string;
  roles: WalletRole[];
  /** Its USDC associated token account. */
  tokenAccount: string;
  /** Raw USDC balance now (0 when the token account does not exist). */
  balance: bigint;
  /** Every signature that touched the token account. */
  signatures: string[];
  /** False when the listing stopped before the account's first transaction (too long a history). */
  complete: boolean;
}

/** What one transaction did to the audited wallets' USDC. */
export interface ChainTransfer {
  signature: string;
  /** Failed on chain (it moved no tokens). */
  failed: boolean;
  /** Per audited wallet address, how its USDC balance changed (absent: unchanged). */
  deltas: ReadonlyMap<string, bigint>;
  /** Owners outside the audited wallets whose USDC rose: where money that left went. */
  recipients: readonly string[];
}

export interface WalletChain {
  mint: string;
  wallets: readonly AuditedWallet[];
  /** Every signature of every wallet's history; undefined when the node did not return it. */
  transfers: ReadonlyMap<string, ChainTransfer | undefined>;
  /** Wallets the operator says are theirs: what goes to them is a sweep, not a drain. */
  operatorWallets: ReadonlySet<string>;
}

/** The terms of the wallet equation, micro-USDC. */
export interface WalletTotals {
  onChain: Minor;
  /** Brought in, credited to nobody and recorded nowhere: funding, or not seen yet. */
  funding: Minor;
  topups: Minor;
  x402: Minor;
  x402Pending: Minor;
  unmatched: Minor;
  /** Taken out by USDC payouts (their net amounts). */
  payouts: Minor;
  /** Paid to x402 sellers by the hot wallet: captured purchases (DESIGN §22). */
  purchases: Minor;
  /** Swept to the operator's own wallets. */
  toOperator: Minor;
  /** onChain − (funding + topups + x402 + x402Pending + unmatched − payouts − purchases − toOperator): 0 when complete. */
  difference: Minor;
}

export interface WalletReport {
  wallets: { address: string; roles: WalletRole[]; balance: Minor; transactions: number }[];
  totals: WalletTotals;
  /** Transfers in that credit no one (reported, not a failure). */
  uncredited: { signature: string; amount: Minor }[];
  transfers: number;
  /** Every break, one sentence each. */
  problems: string[];
}

const usdc = (m: bigint | Minor) => formatAmount(Number(m), 'USDC');

/** Signatures credited by a top-up and by x402 both, and cross-rail guards that do not stand for their credit. */
export function chainCreditProblems(rows: Pick<LedgerRows, 'x402Settlements' | 'onChain'>): string[] {
  const problems: string[] = [];
  const topupBy = new Map(rows.onChain.topupCredits.map((c) => [c.signature, c]));
  const x402By = new Map(rows.x402Settlements.filter((s) => s.status === 'CREDITED').map((s) => [s.signature, s]));
  for (const [signature, topup] of topupBy) {
    const x402 = x402By.get(signature);
    if (x402) {
      problems.push(
        `transaction ${signature} is credited twice: ${usdc(topup.amount)} USDC to top-up ${topup.topupId} of user ${topup.userId}, ` +
          `and ${usdc(x402.amount)} USDC to agent ${x402.agentId} by x402`,
      );
    }
  }
  for (const guard of rows.onChain.chainCredits) {
    const credit = guard.rail === 'topup' ? topupBy.get(guard.signature) : guard.rail === 'x402' ? x402By.get(guard.signature) : undefined;
    if (!credit)
      problems.push(`transaction ${guard.signature}: its cross-rail guard says ${guard.rail} credited it, which has no such credit`);
    else if (credit.amount !== guard.amount) {
      problems.push(
        `transaction ${guard.signature}: its cross-rail guard says ${usdc(guard.amount)} USDC, its ${guard.rail} credit ${usdc(credit.amount)} USDC`,
      );
    }
  }
  return problems;
}

/** What the ledger says about one signature. */
interface LedgerSide {
  /** Credited to top-ups, and to agents by x402, for this signature. */
  topups: Minor;
  x402: Minor;
  creditedBy: string[];
  payout?: PayoutRow;
  /** A captured x402 purchase this transaction paid (its amount left the hot wallet). */
  purchase?: ChargeRow;
  pending?: X402SettlementRow;
  unmatched: boolean;
}

type ReconciledRows = Pick<LedgerRows, 'payouts' | 'x402Settlements' | 'onChain'> & Partial<Pick<LedgerRows, 'charges'>>;

/** What the ledger says about each signature it knows. */
function ledgerSides(chain: WalletChain, rows: ReconciledRows): Map<string, LedgerSide> {
  const ledger = new Map<string, LedgerSide>();
  const side = (signature: string): LedgerSide => {
    let s = ledger.get(signature);
    if (!s) {
      s = { topups: 0, x402: 0, creditedBy: [], unmatched: false };
      ledger.set(signature, s);
    }
    return s;
  };
  for (const c of rows.onChain.topupCredits) {
    const s = side(c.signature);
    s.topups += c.amount;
    s.creditedBy.push(`top-up ${c.topupId}`);
  }
  for (const x of rows.x402Settlements) {
    if (x.status === 'CREDITED') {
      const s = side(x.signature);
      s.x402 += x.amount;
      s.creditedBy.push(`x402 to agent ${x.agentId}`);
    } else if (x.status === 'PENDING') side(x.signature).pending = x;
  }
  for (const u of rows.onChain.unmatched) if (u.mint === chain.mint) side(u.signature).unmatched = true;
  for (const p of rows.payouts) {
    if (!isCurrencyOn(p.currency, 'solana')) continue;
    for (const signature of p.signatures ?? []) side(signature).payout = p;
  }
  for (const c of rows.charges ?? []) {
    if (c.status === 'SUCCESS' && c.purchase?.transaction) side(c.purchase.transaction).purchase = c;
  }
  return ledger;
}

/** What the reconciliation adds up as it reads the transfers. */
interface Tally {
  totals: WalletTotals;
  uncredited: WalletReport['uncredited'];
  problems: string[];
  /** A wallet's address → how a sentence names it (`hot wallet <address>`). */
  roleOf: ReadonlyMap<string, string>;
  operatorWallets: ReadonlySet<string>;
}

/** Counts one transfer the chain shows against what the ledger says of its signature. */
function countTransfer(signature: string, transfer: ChainTransfer, known: LedgerSide | undefined, tally: Tally): void {
  const { totals, uncredited, problems, roleOf } = tally;
  const net = Number([...transfer.deltas.values()].reduce((a, b) => a + b, 0n));
  const moved = [...transfer.deltas.keys()].map((a) => roleOf.get(a) ?? a).join(', ');
  if (transfer.failed) {
    if (net !== 0) problems.push(`transaction ${signature} failed on chain yet moved ${usdc(net)} USDC of the ${moved}`);
    return;
  }
  if (known?.payout) {
    const p = known.payout;
    if (p.status === 'FAILED') {
      if (net !== 0)
        problems.push(
          `payout ${p.payoutId} is FAILED (refunded to agent ${p.agentId}) but its transaction ${signature} moved ${usdc(net)} USDC`,
        );
    } else if (net !== -p.netAmount) {
      problems.push(
        `payout ${p.payoutId} pays net ${usdc(p.netAmount)} USDC but its transaction ${signature} moved ${usdc(net)} USDC of the ${moved}`,
      );
    } else totals.payouts += -net;
    return;
  }
  if (known?.purchase) {
    const c = known.purchase;
    if (net !== -c.amount) {
      problems.push(
        `x402 purchase ${c.chargeId} paid ${usdc(c.amount)} USDC but its transaction ${signature} moved ${usdc(net)} USDC of the ${moved}`,
      );
    } else totals.purchases += c.amount;
    return;
  }
  const credited = known ? known.topups + known.x402 : 0;
  if (known && credited > 0) {
    if (net === credited) {
      totals.topups += known.topups;
      totals.x402 += known.x402;
    } else {
      problems.push(
        `transaction ${signature} brought ${usdc(net)} USDC into the wallets but the ledger credited ${usdc(credited)} USDC for it ` +
          `(${known.creditedBy.join(', ')})`,
      );
    }
    return;
  }
  if (net > 0 && known?.pending) totals.x402Pending += net;
  else if (net > 0 && known?.unmatched) totals.unmatched += net;
  else if (net > 0) {
    totals.funding += net;
    uncredited.push({ signature, amount: net });
  } else if (net < 0) {
    const toOperator = transfer.recipients.length > 0 && transfer.recipients.every((r) => tally.operatorWallets.has(r));
    if (toOperator) totals.toOperator += -net;
    else {
      problems.push(
        `transaction ${signature} took ${usdc(-net)} USDC out of the ${moved}` +
          `${transfer.recipients.length > 0 ? ` to ${transfer.recipients.join(', ')}` : ''} and is no payout: a drained wallet`,
      );
    }
  }
}

/** With every history read in full: what the ledger says moved but the wallets never saw. */
function unseenProblems(chain: WalletChain, ledger: ReadonlyMap<string, LedgerSide>): string[] {
  const problems: string[] = [];
  for (const [signature, known] of ledger) {
    if (chain.transfers.has(signature)) continue;
    if (known.topups + known.x402 > 0) {
      problems.push(`transaction ${signature} is credited (${known.creditedBy.join(', ')}) but brought nothing into the wallets`);
    }
    const p = known.payout;
    if (p?.status === 'COMPLETED' && !(p.signatures ?? []).some((s) => chain.transfers.has(s))) {
      problems.push(`payout ${p.payoutId} is COMPLETED but its transaction ${signature} took nothing out of the hot wallet`);
    }
    if (known.purchase) {
      problems.push(
        `x402 purchase ${known.purchase.chargeId} is SUCCESS but its transaction ${signature} took nothing out of the hot wallet`,
      );
    }
  }
  return problems;
}

/** Reconciles the wallets' histories with the ledger (see the file header). */
export function reconcileWallets(chain: WalletChain, rows: ReconciledRows): WalletReport {
  const problems: string[] = [];
  const ledger = ledgerSides(chain, rows);

  const roleOf = new Map(chain.wallets.map((w) => [w.address, `${w.roles.join(' and ')} ${w.address}`]));
  const complete = chain.wallets.every((w) => w.complete);
  for (const w of chain.wallets) {
    if (!w.complete) problems.push(`${roleOf.get(w.address)}: its history is longer than the audit reads; raise --chain-max-signatures`);
  }

  const totals: WalletTotals = {
    onChain: 0,
    funding: 0,
    topups: 0,
    x402: 0,
    x402Pending: 0,
    unmatched: 0,
    payouts: 0,
    purchases: 0,
    toOperator: 0,
    difference: 0,
  };
  const uncredited: WalletReport['uncredited'] = [];
  const tally: Tally = { totals, uncredited, problems, roleOf, operatorWallets: chain.operatorWallets };
  for (const [signature, transfer] of chain.transfers) {
    if (!transfer) {
      problems.push(`transaction ${signature} is in the wallets' history but the node did not return it`);
      continue;
    }
    countTransfer(signature, transfer, ledger.get(signature), tally);
  }

  if (complete) problems.push(...unseenProblems(chain, ledger));

  const wallets = chain.wallets.map((w) => {
    const history = w.signatures.reduce((sum, s) => sum + (chain.transfers.get(s)?.deltas.get(w.address) ?? 0n), 0n);
    if (w.complete && history !== w.balance) {
      problems.push(`${roleOf.get(w.address)} holds ${usdc(w.balance)} USDC but its history adds up to ${usdc(history)} USDC`);
    }
    totals.onChain += Number(w.balance);
    return { address: w.address, roles: w.roles, balance: Number(w.balance), transactions: w.signatures.length };
  });
  totals.difference =
    totals.onChain -
    (totals.funding +
      totals.topups +
      totals.x402 +
      totals.x402Pending +
      totals.unmatched -
      totals.payouts -
      totals.purchases -
      totals.toOperator);
  return { wallets, totals, uncredited, transfers: chain.transfers.size, problems };
}
