/**
 * Charges: an agent debits a user's balance in the charge's currency and earns it.
 */
import type { CreateChargeRequest, ListChargesQuery } from '../api/request.schemas';
import type { AgentRef } from '../core/agents';
import type { Charge } from '../core/charges';
import {
  AgentDisabledError,
  BalanceLimitError,
  ConflictError,
  InsufficientFundsError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from '../core/errors';
import { isId, newChargeId } from '../core/ids';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../http/cursor';
import type { HttpResult } from '../http/response';
import { readAgentLedger } from '../store/balance.repository';
import { commitCharge, getCharge, getChargeById, listCharges, recordFailedCharge } from '../store/charge.repository';
import { AUTH_MESSAGES, forgetAgent } from './auth';
import { idempotentCommand } from './idempotency';
import { balancesView, chargeView } from './views';

export type CreateChargeInput = CreateChargeRequest & { agent: AgentRef; userId: string; idempotencyKey: string };

/**
 * Creates a charge: 201 SUCCESS, or 402 `insufficient balance` with a FAILED charge kept.
 * Both answers are stored under the Idempotency-Key in the same transaction that writes them.
 */
export function createCharge(input: CreateChargeInput): Promise<HttpResult> {
  const { agent, userId, idempotencyKey, amount, currency, description } = input;
  const agentId = agent.id;
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
        await commitCharge(charge, agent.keyHash, created.record, now);
        return created.result;
      } catch (error) {
        if (error instanceof AgentDisabledError) throw agentRefused(agent);
        if (error instanceof BalanceLimitError) throw new ConflictError('agent balance limit reached, withdraw first');
        if (!(error instanceof InsufficientFundsError)) throw error;
      }
      const refused = answer(402, { error: 'insufficient balance' });
      try {
        await recordFailedCharge({ ...charge, status: 'FAILED' }, agent.keyHash, refused.record, now);
      } catch (error) {
        if (error instanceof AgentDisabledError) throw agentRefused(agent);
        throw error;
      }
      return refused.result;
    },
  );
}

/**
 * The kill switch fired inside the transaction: the agent was disabled (or its key rotated) after
 * this container cached it. Forget the cached answer so the next request reads the item again.
 */
function agentRefused(agent: AgentRef) {
  forgetAgent(agent.keyHash);
  return new UnauthorizedError(AUTH_MESSAGES.createCharge);
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
  limit: number;
}

/** A charge-list cursor: the last id returned and the page number that follows it. */
function readChargeCursor(text: string): Cursor {
  return decodeCursor(text, ([after, page, limit, ...rest]) =>
    rest.length === 0 && isId('charge', typeof after === 'string' ? after : undefined) && isCount(page) && isCount(limit)
      ? { after: after as string, page, limit }
      : undefined,
  );
}

/**
 * Deepest item a page number may reach. Past it a page-number request would step over more keys
 * than it returns; the cursor continues from where the last page ended at the cost of page 1.
 */
export const MAX_PAGE_DEPTH = 10_000;

/**
 * A page of charges, newest first, with `total` from the balance shards' counters and a
 * `nextCursor` that continues with one query however deep it goes.
 */
export async function listAgentCharges(agentId: string, query: ListChargesQuery): Promise<HttpResult> {
  const cursor = query.cursor ? readChargeCursor(query.cursor) : undefined;
  const page = cursor ? cursor.page : query.page;
  const limit = pageLimit(query.limit, cursor?.limit);
  if (!cursor && page * limit > MAX_PAGE_DEPTH) {
    throw new ValidationError(`page × limit must be at most ${MAX_PAGE_DEPTH}: follow nextCursor to read further`);
  }
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
      nextCursor: more && result.lastId ? encodeCursor([result.lastId, page + 1, limit]) : null,
    },
  };
}

/** The agent's earned, withdrawable balance per currency. */
export async function agentBalance(agentId: string): Promise<HttpResult> {
  const ledger = await readAgentLedger(agentId);
  return { statusCode: 200, body: { balances: balancesView(ledger.balances) } };
}
