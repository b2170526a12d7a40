/**
 * The user's side of top-ups (DESIGN §13, docs/topups.md): open one on a rail, list them, read
 * one. Opening moves no money (nothing is credited until the rail's payment is found), so it
 * needs no Idempotency-Key: a retried request opens a second PENDING top-up that simply expires.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { config } from '../../config';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import type { CreateTopupRequest, ListTopupsQuery } from '../../contracts/request.schemas';
import { topupView } from '../../contracts/views';
import { isId, newTopupId } from '../../core/ids';
import { isOnRail } from '../../core/money';
import { MAX_OPEN_TOPUPS, type Topup, TopupLimitError } from '../../core/topups';
import { Refusal, refuse } from '../../messages/refusal';
import { RailAmbiguousAnswerError, RailConfigError, RailUnavailableError } from '../../rails/errors';
import { createTopup, getTopup, listTopups, openTopupCount } from '../../store/topups/topup.repository';
import type { TransactEntry } from '../../store/transact';
import { paypalOrders } from './topup-credit';

// The top-up's public shape lives in contracts/views.ts (the webhook event topup.completed shows it too).
export { SOLANA_PAY_LABEL, topupView } from '../../contracts/views';

/** PayPal could not be asked (down, or answering in a way we cannot use): try again later. */
export class PaymentProviderUnavailableError extends Refusal<'paymentProviderUnavailable'> {
  constructor(cause: unknown) {
    super('paymentProviderUnavailable', [], { cause });
  }
}

/** The payer has MAX_OPEN_TOPUPS PENDING top-ups: one must end (paid, expired or failed) first. */
export class TopupLimitReachedError extends Refusal<'topupLimit'> {
  constructor() {
    super('topupLimit', [MAX_OPEN_TOPUPS]);
  }
}

/**
 * POST /api/v1/users/me/topups → 201 the PENDING top-up with what the user pays it with; 409
 * `topup limit reached: at most 10 open top-ups` when the payer already has that many PENDING.
 */
export async function openTopup(
  userId: string,
  request: CreateTopupRequest,
  opts: { also?: (view: ReturnType<typeof topupView>) => readonly TransactEntry[] } = {},
): Promise<Topup> {
  const cfg = config();
  const now = new Date();
  const id = newTopupId();
  const base = {
    id,
    userId,
    status: 'PENDING' as const,
    createdAt: now.toISOString(),
    externalId: undefined,
    completedAt: undefined,
    holdsOpenSlot: true,
  };
  let topup: Topup;
  if (isOnRail(request, 'solana')) {
    const expiresAt = new Date(now.getTime() + cfg.TOPUP_USDC_EXPIRY_SECONDS * 1000).toISOString();
    topup = {
      ...base,
      currency: 'USDC',
      // Asked for: only a transfer of exactly this completes the top-up (a dust transfer carrying a
      // public reference cannot). Without it, the first transfer of at least TOPUP_USDC_MIN_AMOUNT does.
      amount: request.amount,
      requestedAmount: request.amount,
      expiresAt,
      address: required(cfg.SOLANA_DEPOSIT_ADDRESS),
      mint: required(cfg.USDC_MINT),
      // A fresh 32-byte public key (Solana Pay `reference`): only its owner's payment carries it.
      reference: bs58.encode(randomBytes(32)),
      scannedThrough: undefined,
    };
  } else {
    const expiresAt = new Date(now.getTime() + cfg.TOPUP_USD_EXPIRY_SECONDS * 1000).toISOString();
    // Refused before PayPal is asked, so a refusal leaves no order behind (the create's own
    // condition is what makes the cap exact under concurrency).
    if ((await openTopupCount(userId)) >= MAX_OPEN_TOPUPS) throw new TopupLimitReachedError();
    try {
      const order = await paypalOrders().create({
        topupId: id,
        amount: request.amount,
        ...(cfg.TOPUP_RETURN_URL ? { returnUrl: cfg.TOPUP_RETURN_URL } : {}),
      });
      topup = { ...base, currency: 'USD', amount: request.amount, expiresAt, orderId: order.orderId, approveUrl: order.approveUrl };
    } catch (error) {
      if (error instanceof RailUnavailableError || error instanceof RailAmbiguousAnswerError || error instanceof RailConfigError) {
        throw new PaymentProviderUnavailableError(error);
      }
      throw error;
    }
  }
  try {
    // `also` joins the create (the console's idempotency record: a double submit opens one top-up).
    await createTopup(topup, opts.also?.(topupView(topup)));
  } catch (error) {
    if (error instanceof TopupLimitError) throw new TopupLimitReachedError();
    throw error;
  }
  return topup;
}

/** GET /api/v1/users/me/topups/{id}; another user's is 404 `topup not found`. */
export async function readTopup(userId: string, topupId: string | undefined): Promise<Topup> {
  const topup = isId('topup', topupId) ? await getTopup(userId, topupId) : undefined;
  if (!topup) throw refuse('topupNotFound');
  return topup;
}

/** GET /api/v1/users/me/topups → `{data, nextCursor}`, newest first. */
export async function listMyTopups(userId: string, query: ListTopupsQuery): Promise<{ topups: Topup[]; nextCursor: string | null }> {
  const cursor = query.cursor
    ? decodeCursor(query.cursor, ([after, limit]) =>
        isId('topup', after as string) && isCount(limit) ? { after: after as string, limit } : undefined,
      )
    : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listTopups(userId, limit, cursor?.after);
  const last = page.topups.at(-1);
  return { topups: page.topups, nextCursor: page.more && last ? encodeCursor([last.id, limit]) : null };
}

/** The operator has not set the deposit wallet (SOLANA_DEPOSIT_ADDRESS, stage `depositAddress`) yet. */
export class UsdcTopupsUnavailableError extends Refusal<'usdcTopupsUnavailable'> {
  constructor() {
    super('usdcTopupsUnavailable', []);
  }
}

function required(value: string | undefined): string {
  if (!value) throw new UsdcTopupsUnavailableError();
  return value;
}
