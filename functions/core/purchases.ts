/**
 * x402 purchases (DESIGN §22, docs/x402.md "Buying"): an agent pays any x402 seller from its
 * payer's USDC, under the grant's limits. Pure: what a purchase is, how its id maps to the hold
 * behind it, and which seller requirements the service accepts.
 *
 * A purchase IS a charge with `capture: false` (a hold) whose record carries `purchase`: the same
 * item, the same grant and policy checks, the same hold, approval and history; only its ending
 * differs. It is captured (SUCCESS) when the transfer the service signed is on chain, never by the
 * agent; released (EXPIRED) when that transfer can no longer land. Its public id is `xp` and the
 * hold's id without its `c`: the one names the other, so either finds the item with one read.
 */
import { PURCHASE_FAILURE_REASONS, type RequirementsProblem, requirementsProblemText } from '../messages/problems';
import type { Minor } from './money';

/** What the seller asked for, as the service accepted it: exactly what the stock client scheme is given. */
export interface AcceptedRequirements {
  scheme: 'exact';
  network: string;
  asset: string;
  /** Atomic units (micro-USDC), a string of digits. */
  amount: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** Only what the transaction is built from: the seller's facilitator as fee payer, and its memo if any. */
  extra: { feePayer: string; memo?: string };
}

/** The payment the service signed: built once, answered on every read and replay. */
export interface SignedPurchase {
  /** `{x402Version, payload: {transaction}}`: what a stock `SchemeNetworkClient.createPaymentPayload` returns. */
  paymentPayload: { x402Version: number; payload: Record<string, unknown> };
  /**
   * The hot wallet's signature of the message (base58). Ed25519 signs one message one way, so a
   * landed transaction carrying it is this transfer, whoever added the fee payer's signature.
   */
  authoritySignature: string;
  /** The transaction's recent blockhash and the last block height it can land at. */
  blockhash: string;
  lastValidBlockHeight: number;
  /** The transaction's memo text (the stock client's random nonce, or the seller's memo): how the reconciler narrows its search. */
  memo: string;
  signedAt: string;
}

/** The x402 side of a purchase's record (`Charge.purchase`). */
export interface PurchaseTerms {
  requirements: AcceptedRequirements;
  resource: { url: string; description?: string } | null;
  signed?: SignedPurchase;
  /** The transaction signature it landed under, once captured. */
  transaction?: string;
}

export const PURCHASE_ID = /^xp[0-9a-z]{26}a[0-9a-z]{26}$/;

/** The purchase's public id of its hold's charge id (`c…` → `xp…`). */
export const purchaseIdOf = (chargeId: string): string => `xp${chargeId.slice(1)}`;

/** The hold's charge id of a purchase id; undefined for anything that is not one. */
export const chargeIdOfPurchase = (id: string | undefined): string | undefined =>
  id !== undefined && PURCHASE_ID.test(id) ? `c${id.slice(2)}` : undefined;

/** The charge's `failureReason` when the seller never landed the transfer before it could no longer land. */
export const NOT_SETTLED = PURCHASE_FAILURE_REASONS.notSettled;

/** The memo the stock client puts in the transaction, at most this many bytes (its own limit). */
export const MAX_MEMO_BYTES = 256;

/** The longest `maxTimeoutSeconds` a seller may ask for: a day. */
const MAX_TIMEOUT_SECONDS = 86_400;

/** The service's own wallets and settings the requirements are judged against. */
export interface PurchaseSettings {
  network: string;
  usdcMint: string;
  /** Every key of the service: the hot wallet, the treasury, the deposit wallet. */
  serviceKeys: readonly string[];
  minimum: Minor;
  maximum: Minor;
  isAddress: (text: string) => boolean;
}

export type RequirementsVerdict =
  | { ok: true; accepted: AcceptedRequirements; amount: Minor }
  | { ok: false; problem: RequirementsProblem; message: string };

const DIGITS = /^[1-9]\d{0,17}$/;
const FIELDS = new Set(['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds', 'extra']);

/**
 * Judges one entry of the seller's `accepts`: the exact scheme on the service's network in its USDC,
 * an amount within bounds, a payTo that is not the service's (400 `pay agents of this service with
 * a charge`), and the seller's facilitator as fee payer (never a key of the service: the hot wallet
 * must not pay the fee, or sign as anything but the transfer's authority). Anything else is named.
 * What passes is rebuilt from the checked fields only: nothing else the seller sent reaches the
 * signer (an `extra.recentBlockhash` would set the transaction's lifetime, which the service must know).
 */
export function judgeRequirements(input: unknown, s: PurchaseSettings): RequirementsVerdict {
  const refuse = (problem: RequirementsProblem) => ({ ok: false as const, problem, message: requirementsProblemText(problem) });
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return refuse({ field: '', code: 'notObject' });
  const r = input as Record<string, unknown>;
  const unknown = Object.keys(r).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0) return refuse({ field: `.${unknown[0]}`, code: 'unknownField' });
  if (r.scheme !== 'exact') return refuse({ field: '.scheme', code: 'unsupportedScheme' });
  if (r.network !== s.network) return refuse({ field: '.network', code: 'unsupportedNetwork' });
  if (r.asset !== s.usdcMint) return refuse({ field: '.asset', code: 'unsupportedAsset' });
  if (typeof r.amount !== 'string' || !DIGITS.test(r.amount)) return refuse({ field: '.amount', code: 'atomicUnits' });
  const amount = Number(r.amount);
  if (!Number.isSafeInteger(amount) || amount > s.maximum) return refuse({ field: '.amount', code: 'aboveMaximum' });
  if (amount < s.minimum) return refuse({ field: '.amount', code: 'belowMinimum' });
  if (typeof r.payTo !== 'string' || !s.isAddress(r.payTo)) return refuse({ field: '.payTo', code: 'invalidAddress' });
  if (s.serviceKeys.includes(r.payTo)) return refuse({ field: '.payTo', code: 'payToIsService' });
  const timeout = r.maxTimeoutSeconds ?? 60;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_SECONDS) {
    return refuse({ field: '.maxTimeoutSeconds', code: 'timeout', args: [MAX_TIMEOUT_SECONDS] });
  }
  const extra = r.extra;
  if (extra === null || typeof extra !== 'object' || Array.isArray(extra)) return refuse({ field: '.extra.feePayer', code: 'required' });
  const { feePayer, memo } = extra as Record<string, unknown>;
  if (feePayer === undefined) return refuse({ field: '.extra.feePayer', code: 'required' });
  if (typeof feePayer !== 'string' || !s.isAddress(feePayer)) return refuse({ field: '.extra.feePayer', code: 'invalidAddress' });
  if (s.serviceKeys.includes(feePayer)) return refuse({ field: '.extra.feePayer', code: 'serviceKey' });
  if (feePayer === r.payTo) return refuse({ field: '.extra.feePayer', code: 'feePayerIsPayTo' });
  if (memo !== undefined && (typeof memo !== 'string' || Buffer.byteLength(memo, 'utf8') > MAX_MEMO_BYTES || memo === '')) {
    return refuse({ field: '.extra.memo', code: 'memoBytes', args: [MAX_MEMO_BYTES] });
  }
  return {
    ok: true,
    amount,
    accepted: {
      scheme: 'exact',
      network: s.network,
      asset: s.usdcMint,
      amount: r.amount,
      payTo: r.payTo,
      maxTimeoutSeconds: timeout,
      extra: { feePayer, ...(memo !== undefined ? { memo } : {}) },
    },
  };
}

/**
 * What the chain's answer makes of a signed purchase still PENDING, for the reconciler and the
 * operator alike (use-cases/x402-purchases/purchase-reconcile.ts), in this order:
 * - `capture`: its transfer landed and moved the money;
 * - `release`: its transfer landed and failed (the message can never land again), or its blockhash
 *   is past at `finalized` and the search read every slot it could have landed in without it;
 * - `in-flight`: not found, and its blockhash may still land (finalized height not past it);
 * - `unsearched`: past its blockhash, not found, but the search did not reach back to where it
 *   could be (or could not read a candidate): it may have landed, so its hold waits.
 */
export type SearchVerdict = 'capture' | 'release' | 'in-flight' | 'unsearched';

export function judgeSearch(s: {
  landed: { err: unknown } | undefined;
  finalizedHeight: number;
  lastValidBlockHeight: number;
  covered: boolean;
}): SearchVerdict {
  if (s.landed) return s.landed.err === null || s.landed.err === undefined ? 'capture' : 'release';
  if (s.finalizedHeight <= s.lastValidBlockHeight) return 'in-flight';
  return s.covered ? 'release' : 'unsearched';
}

/** An unsearched purchase's first wait before it is searched for again, and the longest (DESIGN §24). */
export const SEARCH_BACKOFF_FIRST_SECONDS = 60;
export const SEARCH_BACKOFF_MAX_SECONDS = 3_600;

/** The wait after a search that did not reach a purchase: 1 min the first time, then twice the last, at most 1 h. */
export const nextSearchBackoff = (previousSeconds: number | undefined): number =>
  previousSeconds === undefined || !(previousSeconds >= SEARCH_BACKOFF_FIRST_SECONDS)
    ? SEARCH_BACKOFF_FIRST_SECONDS
    : Math.min(SEARCH_BACKOFF_MAX_SECONDS, previousSeconds * 2);
