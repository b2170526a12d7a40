/**
 * Charges: an agent debits a user's balance in the charge's currency and earns it.
 */
import { config } from '../config';
import { IdempotencyInProgressError, InsufficientFundsError, NotFoundError, ValidationError } from '../core/errors';
import { newChargeId } from '../core/ids';
import { AmountError, type Currency, parseAmount, unitsToMinor } from '../core/money';
import { decodeCursor, encodeCursor } from '../http/cursor';
import { type HttpResult, serialize } from '../http/response';
import { randomShard, readAgentLedger } from '../store/balance.repository';
import {
  type Charge,
  commitCharge,
  getCharge,
  getChargeById,
  IdempotencyRecordExistsError,
  listCharges,
  recordFailedCharge,
} from '../store/charge.repository';
import { ConcurrencyError } from '../store/transact';
import { fingerprint, replay } from './idempotency';
import { balancesView, chargeView } from './views';

export interface CreateChargeInput {
  agentId: string;
  userId: string;
  idempotencyKey: string;
  /** The amount's JSON literal, exactly as sent. */
  amount: string;
  currency: Currency;
  description: string;
}

/** Parses a money literal for `currency` within the configured maximum; a 400 otherwise. */
export function parseMoney(literal: string, currency: Currency, field = 'amount'): number {
  try {
    return parseAmount(literal, currency, unitsToMinor(config().MAX_AMOUNT, currency), field);
  } catch (error) {
    if (error instanceof AmountError) throw new ValidationError(error.message);
    throw error;
  }
}

/**
 * Creates a charge: 201 SUCCESS, or 402 `insufficient balance` with a FAILED charge kept.
 * Both answers are stored under the Idempotency-Key in the same transaction that writes them.
 */
export async function createCharge(input: CreateChargeInput): Promise<HttpResult> {
  const amount = parseMoney(input.amount, input.currency);
  const scope = `${input.agentId}#charges`;
  const fp = fingerprint({ userId: input.userId, amount, currency: input.currency, description: input.description });

  // Two rounds at most: the second only when a matching record expired between write and read.
  for (let round = 0; round < 2; round++) {
    const now = new Date();
    const charge: Charge = {
      id: newChargeId(),
      agentId: input.agentId,
      userId: input.userId,
      idempotencyKey: input.idempotencyKey,
      amount,
      currency: input.currency,
      description: input.description,
      status: 'SUCCESS',
      createdAt: now.toISOString(),
    };
    const shard = randomShard();
    try {
      try {
        const body = serialize(chargeView(charge));
        await commitCharge(charge, shard, { scope, key: input.idempotencyKey, record: { fingerprint: fp, statusCode: 201, body } }, now);
        return { statusCode: 201, rawBody: body };
      } catch (error) {
        if (!(error instanceof InsufficientFundsError)) throw error;
        const failed: Charge = { ...charge, status: 'FAILED' };
        const body = serialize({ error: 'insufficient balance' });
        await recordFailedCharge(
          failed,
          shard,
          { scope, key: input.idempotencyKey, record: { fingerprint: fp, statusCode: 402, body } },
          now,
        );
        return { statusCode: 402, rawBody: body };
      }
    } catch (error) {
      if (error instanceof IdempotencyRecordExistsError) {
        const answer = await replay(scope, input.idempotencyKey, error.existing, fp, new Date());
        if (answer) return answer;
        continue;
      }
      // Conflicts past every retry: most likely a concurrent request with this very key.
      if (error instanceof ConcurrencyError) throw new IdempotencyInProgressError();
      throw error;
    }
  }
  throw new IdempotencyInProgressError();
}

const CHARGE_ID = /^c[0-9a-z]{26}$/;

/** One charge of this agent (another agent's charge is "not found", never "forbidden"). */
export async function readCharge(agentId: string | undefined, chargeId: string | undefined): Promise<HttpResult> {
  if (!chargeId || !CHARGE_ID.test(chargeId)) throw new NotFoundError('charge not found');
  const charge = agentId ? await getCharge(agentId, chargeId) : await getChargeById(chargeId);
  if (!charge) throw new NotFoundError('charge not found');
  return { statusCode: 200, body: chargeView(charge) };
}

export interface ListChargesQuery {
  page: number;
  limit: number;
  cursor?: string | undefined;
}

interface Cursor {
  after: string;
  page: number;
}

/** A charge-list cursor: the last id returned and the page number that follows it. */
function readChargeCursor(text: string): Cursor {
  return decodeCursor(text, ([after, page]) =>
    typeof after === 'string' && CHARGE_ID.test(after) && Number.isSafeInteger(page) && (page as number) >= 1
      ? { after, page: page as number }
      : undefined,
  );
}

/**
 * A page of charges, newest first, with `total` from the balance shards' counters and a
 * `nextCursor` that continues with one query however deep it goes.
 */
export async function listAgentCharges(agentId: string, query: ListChargesQuery): Promise<HttpResult> {
  const cursor = query.cursor ? readChargeCursor(query.cursor) : undefined;
  const page = cursor ? cursor.page : query.page;
  const { limit } = query;
  const ledger = await readAgentLedger(agentId);
  const total = ledger.charges;
  const skip = (page - 1) * limit;
  const result =
    skip >= total && !cursor
      ? { charges: [], lastId: undefined }
      : await listCharges(agentId, { limit, skip, ...(cursor ? { after: cursor.after } : {}) });
  const more = result.lastId !== undefined && page * limit < total;
  return {
    statusCode: 200,
    body: {
      data: result.charges.map(chargeView),
      pagination: { total, page, limit, totalPages: Math.ceil(total / limit) },
      nextCursor: more && result.lastId ? encodeCursor([result.lastId, page + 1]) : null,
    },
  };
}

/** The agent's earned, withdrawable balance per currency. */
export async function agentBalance(agentId: string): Promise<HttpResult> {
  const ledger = await readAgentLedger(agentId);
  return { statusCode: 200, body: { balances: balancesView(ledger.balances) } };
}
