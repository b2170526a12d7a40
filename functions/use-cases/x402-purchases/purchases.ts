/**
 * x402 purchases (DESIGN §22, docs/x402.md "Buying from x402 sellers"): an agent pays any x402
 * seller from its payer's USDC. A purchase is a hold made by `createCharge` itself (the same grant
 * and policy decisions, the same one transaction with its idempotency record); then, and only
 * then, the service signs the seller's payment with the hot wallet (x402/purchase-signer.ts: the
 * stock client scheme, a signer that signs exactly that transfer) and records it once
 * (`recordSignedPurchase`: one payment per purchase, whoever asks, however often).
 *
 * Exactly once, by the chain: the hot wallet's signature is part of any transaction that carries
 * the transfer, so the service finds it on chain whoever landed it. Captured (SUCCESS, the hold
 * becomes the payer's spend, no agent credited: the money left by the hot wallet) once that
 * transaction is on chain at `confirmed` — from the agent's receipt (checked on chain) or the
 * reconciler's search of the hot wallet's token account (purchase-reconcile.ts). Released (EXPIRED)
 * once the finalized block height has passed its blockhash's last valid height without it: nothing
 * can land after that, and the height is read before the search, so a transfer that landed in time
 * is always found first. Both are `settlePending` with the `purchase` option, from the state read
 * (purchase-endings.ts): never both.
 */

import bs58 from 'bs58';
import { parse } from 'lossless-json';
import { config } from '../../config';
import { StoredReply } from '../../contracts/api';
import type { ChargeOutcome } from '../../contracts/charge-outcome';
import { serialize } from '../../contracts/json';
import { validate } from '../../contracts/validation';
import { paymentPayloadView } from '../../contracts/views';
import { createPurchaseSchema } from '../../contracts/x402';
import type { AgentRef } from '../../core/agents';
import type { Charge } from '../../core/charges';
import { AgentBlockedError, AgentDisabledError, GrantExpiredError, GrantRevokedError } from '../../core/errors';
import { parseAmount, unitsToMinor } from '../../core/money';
import { chargeIdOfPurchase, judgeRequirements, type PurchaseTerms, purchaseIdOf, type SignedPurchase } from '../../core/purchases';
import { X402_VERSION } from '../../core/x402';
import { refuse } from '../../messages/refusal';
import { pendingOf } from '../../store/charges/charge-pending.repository';
import { getCharge } from '../../store/charges/charge-read.repository';
import type { GrantKeyTerms } from '../../store/identity/credentials.repository';
import {
  listAgentPurchases,
  PurchaseMessageTakenError,
  PurchaseMovedOnError,
  recordSignedPurchase,
} from '../../store/x402-purchases/purchase.repository';
import type { PurchaseChain } from '../../x402/purchase-chain';
import type { PurchaseSigner } from '../../x402/purchase-signer';
import { createCharge } from '../charges/charges';

import { settleLanded } from './purchase-endings';

/** Base58 check of an address (32 bytes), here rather than the facilitator's: the list and receipt functions need no facilitator. */
const isBase58Address = (text: string): boolean => {
  try {
    return bs58.decode(text).length === 32;
  } catch {
    return false;
  }
};

/** After the payer approves, the agent has this long to fetch the payment (GET builds it then: a blockhash lives about a minute). */
export const PURCHASE_HOLD_SECONDS = 600;
/** About when a signed payment stops being landable (150 blocks of ~0.4 s, with margin): the purchase's `expiresAt`. The chain decides. */
const PAYMENT_LIFETIME_SECONDS = 120;

const paymentExpiry = (signed: SignedPurchase): string =>
  new Date(new Date(signed.signedAt).getTime() + PAYMENT_LIFETIME_SECONDS * 1000).toISOString();

export interface PurchaseRequest {
  x402Version?: unknown;
  paymentRequirements?: unknown;
  resource?: unknown;
}

export interface CreatePurchaseInput {
  agent: AgentRef & { name?: string };
  userId: string;
  userKeyHash: string;
  grant?: GrantKeyTerms | undefined;
  idempotencyKey: string;
  baseUrl: string;
  body: PurchaseRequest;
  /** Builds the payment; only asked once the hold committed. */
  signer: () => Promise<PurchaseSigner>;
}

/** The settings the requirements are judged against: the service's network, mint and own wallets. */
function settings() {
  const cfg = config();
  const keys = [cfg.SOLANA_HOT_WALLET_ADDRESS, cfg.X402_PAY_TO, cfg.SOLANA_DEPOSIT_ADDRESS].filter((k): k is string => !!k);
  return {
    network: cfg.X402_NETWORK,
    usdcMint: cfg.USDC_MINT ?? '',
    serviceKeys: keys,
    minimum: parseAmount(cfg.X402_MIN_AMOUNT, 'USDC', Number.MAX_SAFE_INTEGER),
    maximum: unitsToMinor(cfg.MAX_AMOUNT, 'USDC'),
    isAddress: isBase58Address,
  };
}

function readResource(input: unknown): PurchaseTerms['resource'] {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'object' || Array.isArray(input)) throw refuse('purchaseResourceNotObject');
  const { url, description, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw refuse('unknownField', `resource.${unknown}`);
  if (typeof url !== 'string' || url.length > 2_048 || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw refuse('purchaseResourceUrlInvalid');
  }
  if (description !== undefined && (typeof description !== 'string' || description.length > 500)) {
    throw refuse('purchaseResourceDescriptionInvalid');
  }
  return { url, ...(description !== undefined ? { description } : {}) };
}

/**
 * POST /api/v1/agents/x402/purchases: 400 for requirements the service does not pay (named), then
 * the hold exactly as `createCharge` with `capture: false` makes it (402/403 refusals, 202 above the
 * approval threshold), then the payment. The answer's `paymentPayload` is the one payment of this
 * purchase: a replay, a retry after a crash, a GET all answer it, and nothing is signed again.
 */
export async function createPurchase(input: CreatePurchaseInput): Promise<ChargeOutcome | StoredReply> {
  const { body } = input;
  const extra = Object.keys(body).find((k) => !['x402Version', 'paymentRequirements', 'resource'].includes(k));
  if (extra !== undefined) throw refuse('unknownField', extra);
  if (body.x402Version !== X402_VERSION) throw refuse('x402VersionUnsupported', X402_VERSION);
  if (body.paymentRequirements === undefined) throw refuse('paymentRequirementsRequired');
  const verdict = judgeRequirements(body.paymentRequirements, settings());
  if (!verdict.ok) throw refuse('invalidInput', verdict.message);
  const resource = readResource(body.resource);
  // The documented request (createPurchaseSchema, what docs/openapi.json shows) is the enforced one:
  // after the wire format's own checks above (their order and words are x402's), nothing it would
  // refuse goes on. `resource: null` is read as absent, as x402 clients send it.
  validate(createPurchaseSchema, body.resource === null ? { ...body, resource: undefined } : body);
  const terms: PurchaseTerms = { requirements: verdict.accepted, resource };
  const outcome = await createCharge({
    agent: input.agent,
    userId: input.userId,
    userKeyHash: input.userKeyHash,
    grant: input.grant,
    idempotencyKey: input.idempotencyKey,
    baseUrl: input.baseUrl,
    amount: verdict.amount,
    currency: 'USDC',
    description: `x402: ${resource?.url ?? verdict.accepted.payTo}`,
    capture: false,
    holdSeconds: PURCHASE_HOLD_SECONDS,
    purchase: { terms },
  });
  if (outcome instanceof StoredReply) return withStoredPayment(outcome, input);
  // The hold is committed (the outcome carries the charge as written): now the payment.
  if (outcome.kind !== 'purchase' || outcome.awaitsApproval) return outcome;
  const signed = await ensurePayment(outcome.charge, input.signer);
  return signed ? { ...outcome, charge: withPayment(outcome.charge, signed) } : outcome;
}

/** The charge with its payment, as its record then says it (store/x402-purchases/purchase.repository.ts `recordSignedPurchase`). */
function withPayment(charge: Charge, signed: SignedPurchase): Charge {
  const terms = charge.purchase as PurchaseTerms;
  return { ...charge, expiresAt: paymentExpiry(signed), purchase: { ...terms, signed } };
}

/**
 * A replay (or a retry after a crash between the hold and its payment): the stored answer never
 * carries the payment (it is stored with the hold, before the signing), so a 201 is answered with
 * the purchase's one payment, the one recorded or one signed now.
 */
async function withStoredPayment(reply: StoredReply, input: CreatePurchaseInput): Promise<StoredReply> {
  if (reply.statusCode !== 201) return reply;
  const answered = parse(reply.rawBody) as { id: string; paymentPayload: unknown };
  if (answered.paymentPayload !== null) return reply;
  const chargeId = chargeIdOfPurchase(answered.id);
  const charge = chargeId ? await getCharge(input.agent.id, chargeId) : undefined;
  if (!charge) return reply;
  const signed = await ensurePayment(charge, input.signer);
  if (!signed) return reply;
  const paid = { ...answered, expiresAt: paymentExpiry(signed), paymentPayload: paymentPayloadView(signed) };
  return new StoredReply(reply.statusCode, serialize(paid));
}

/**
 * The purchase's one payment: the recorded one, or, for a hold that may now be paid (PENDING,
 * waiting for nothing but the transfer) and has none yet, one signed and recorded now. Two callers
 * at once each sign; one records, the other's signature is dropped unseen and it answers the
 * recorded one. Undefined while it waits for the payer, once it ended without one, and while the
 * message it would sign is another purchase's (store/x402-purchases/purchase.repository.ts PurchaseMessageTakenError).
 */
export async function ensurePayment(charge: Charge, signer: () => Promise<PurchaseSigner>): Promise<SignedPurchase | undefined> {
  const terms = charge.purchase;
  if (!terms) return undefined;
  if (terms.signed) return terms.signed;
  if (charge.status !== 'PENDING' || charge.pendingReason !== 'capture') return undefined;
  for (let attempt = 1; ; attempt++) {
    const now = new Date();
    const signed = await (await signer()).sign(terms.requirements, now);
    const expiresAt = paymentExpiry(signed);
    try {
      await recordSignedPurchase(pendingOf(charge), signed, expiresAt, now);
      return signed;
    } catch (error) {
      // What refuses a capture refuses the payment (its record is where the USDC is committed).
      if (error instanceof GrantRevokedError) throw refuse('grantRevoked');
      if (error instanceof GrantExpiredError) throw refuse('grantExpired');
      if (error instanceof AgentBlockedError) throw refuse('agentBlockedByUser');
      if (error instanceof AgentDisabledError) throw refuse('agentDisabled');
      if (error instanceof PurchaseMessageTakenError) {
        // Another purchase holds this very message (a seller's fixed memo, the same blockhash): a
        // slot later the blockhash differs. Still the same: no payment yet, a later GET builds it.
        if (attempt >= SIGN_ATTEMPTS) return undefined;
        await new Promise((resolve) => setTimeout(resolve, RESIGN_AFTER_MS));
        continue;
      }
      if (!(error instanceof PurchaseMovedOnError)) throw error;
      const now = await getCharge(charge.agentId, charge.id);
      return now?.purchase?.signed;
    }
  }
}

/** Signing again after another purchase took the message: a Solana slot is about 400 ms. */
const SIGN_ATTEMPTS = 3;
const RESIGN_AFTER_MS = 450;

async function readPurchase(agentId: string, id: string | undefined): Promise<Charge> {
  const chargeId = chargeIdOfPurchase(id);
  const charge = chargeId ? await getCharge(agentId, chargeId) : undefined;
  if (!charge?.purchase) throw refuse('purchaseNotFound');
  return charge;
}

/** GET /api/v1/agents/x402/purchases/{id}: the purchase; once its payer approved it, with its payment (built on the first read). */
export async function getPurchase(agentId: string, id: string | undefined, signer: () => Promise<PurchaseSigner>): Promise<Charge> {
  const charge = await readPurchase(agentId, id);
  if (charge.purchase?.signed || charge.status !== 'PENDING' || charge.pendingReason !== 'capture') return charge;
  await ensurePayment(charge, signer);
  return readPurchase(agentId, id);
}

/** GET /api/v1/agents/x402/purchases: this agent's purchases, newest first; `lastId` when there is another page. */
export function listPurchases(agentId: string, opts: { limit: number; after?: string }): Promise<{ charges: Charge[]; lastId?: string }> {
  return listAgentPurchases(agentId, opts);
}

/**
 * POST /api/v1/agents/x402/purchases/{id}/receipt `{transaction}`: the seller's PAYMENT-RESPONSE
 * transaction, checked on chain (confirmed, carrying the hot wallet's signature of this payment):
 * captured at once. 409 `transaction not found` while the chain does not show it so (the reconciler
 * finds it anyway once it lands); 400 when it is another transaction.
 */
export async function reportReceipt(
  agentId: string,
  id: string | undefined,
  body: { transaction?: unknown },
  chain: () => Promise<PurchaseChain>,
): Promise<Charge> {
  const { transaction } = body;
  if (typeof transaction !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{64,90}$/.test(transaction)) {
    throw refuse('invalidTransactionSignature');
  }
  const charge = await readPurchase(agentId, id);
  const signed = charge.purchase?.signed;
  if (charge.status === 'SUCCESS' && charge.purchase?.transaction === transaction) return charge;
  if (charge.status !== 'PENDING' || !signed) throw refuse('purchaseNotAwaitingSettlement');
  const landed = await (await chain()).landedAs(transaction, signed.authoritySignature);
  if (!landed) {
    throw refuse('purchaseTransactionNotFound');
  }
  const ended = await settleLanded(charge, landed.transaction, landed.err);
  return ended.charge;
}

export { purchaseIdOf };
