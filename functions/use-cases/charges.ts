/**
 * Charges: an agent debits a user's balance in the charge's currency and earns it.
 */
import type { CreateChargeRequest, ListChargesQuery } from '../api/request.schemas';
import type { Charge } from '../core/charges';
import { BalanceLimitError, ConflictError, InsufficientFundsError, NotFoundError } from '../core/errors';
import { isId, newChargeId } from '../core/ids';
import { decodeCursor, encodeCursor } from '../http/cursor';
import type { HttpResult } from '../http/response';
import { readAgentLedger } from '../store/balance.repository';
import { commitCharge, getCharge, getChargeById, listCharges, recordFailedCharge } from '../store/charge.repository';
import { idempotentCommand } from './idempotency';
import { balancesView, chargeView } from './views';

export type CreateChargeInput = CreateChargeRequest & { agentId: string; userId: string; idempotencyKey: string };

/**
 * Creates a charge: 201 SUCCESS, or 402 `insufficient balance` with a FAILED charge kept.
 * Both answers are stored under the Idempotency-Key in the same transaction that writes them.
 */
export function createCharge(input: CreateChargeInput): Promise<HttpResult> {
  const { agentId, userId, idempotencyKey, amount, currency, description } = input;
  return idempotentCommand(
    // Two rounds: the second only when a matching record expired between write and read.
    { scope: `${agentId}#charges`, key: idempotencyKey, request: { userId, amount, currency, description }, rounds: 2 },
    async ({ now, answer }) => {
      const charge: Charge = {
        id: newChargeId(),
        agentId,
        userId,
        idempotencyKey,
        amount,
        currency,
        description,
        status: 'SUCCESS',
        createdAt: now.toISOString(),
      };
      const created = answer(201, chargeView(charge));
      try {
        await commitCharge(charge, created.record, now);
        return created.result;
      } catch (error) {
        if (error instanceof BalanceLimitError) throw new ConflictError('agent balance limit reached, withdraw first');
        if (!(error instanceof InsufficientFundsError)) throw error;
      }
      const refused = answer(402, { error: 'insufficient balance' });
      await recordFailedCharge({ ...charge, status: 'FAILED' }, refused.record, now);
      return refused.result;
    },
  );
}

/** One charge of this agent (another agent's charge is "not found", never "forbidden"). */
export async function readCharge(agentId: string | undefined, chargeId: string | undefined): Promise<HttpResult> {
  if (!isId('charge', chargeId)) throw new NotFoundError('charge not found');
  const charge = agentId ? await getCharge(agentId, chargeId) : await getChargeById(chargeId);
  if (!charge) throw new NotFoundError('charge not found');
  return { statusCode: 200, body: chargeView(charge) };
}

interface Cursor {
  after: string;
  page: number;
}

/** A charge-list cursor: the last id returned and the page number that follows it. */
function readChargeCursor(text: string): Cursor {
  return decodeCursor(text, ([after, page]) =>
    typeof after === 'string' && isId('charge', after) && Number.isSafeInteger(page) && (page as number) >= 1
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
