/**
 * The operator and held payouts (docs/payouts.md, "Held payouts"): a disabled agent's payouts are
 * held by the worker before anything is started at the rail (use-cases/payouts/payouts.ts). The operator
 * lists them, and releases each (paid, once, whatever the agent's state) or cancels it (its gross,
 * fee included, back to the agent's balance: a money movement, under an Idempotency-Key).
 */
import type { StoredReply } from '../../contracts/api';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import type { AdminListPayoutsQuery } from '../../contracts/request.schemas';
import { renderPayout } from '../../contracts/settled-outcomes';
import { isId } from '../../core/ids';
import { CANCELLED_BY_OPERATOR, type Payout } from '../../core/payouts';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { getPayout } from '../../store/payouts/payout.repository';
import {
  cancelHeldPayout,
  type InflightPosition,
  listPayoutsByStatus,
  releaseHeldPayout,
} from '../../store/payouts/payout-hold.repository';
import { payoutEvents } from '../events/events';
import { idempotent } from '../idempotency';

const notFound = () => refuse('payoutNotFound');
const notHeld = () => refuse('payoutNotHeld');

/** Rounds of read-then-commit: a cancel races only a release or another cancel, and loses to either at once. */
const CANCEL_ROUNDS = 2;

/** A payout-list cursor: where the last page ended in the index, and its page size. */
function readCursor(text: string): { after: InflightPosition; limit: number } {
  const asText = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return decodeCursor(text, ([agentId, payoutId, sortKey, limit, ...rest]) => {
    const [agent, payout, key] = [asText(agentId), asText(payoutId), asText(sortKey)];
    return rest.length === 0 && isId('agent', agent) && isId('payout', payout) && key !== undefined && isCount(limit)
      ? { after: { agentId: agent, payoutId: payout, sortKey: key }, limit }
      : undefined;
  });
}

/** GET /api/v1/admin/payouts?status=HELD: payouts of that status across agents, oldest first. */
export async function listPayoutsForOperator(query: AdminListPayoutsQuery): Promise<{ payouts: Payout[]; nextCursor: string | null }> {
  const cursor = query.cursor ? readCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listPayoutsByStatus(query.status, { limit, ...(cursor ? { after: cursor.after } : {}) });
  const next = page.last ? encodeCursor([page.last.agentId, page.last.payoutId, page.last.sortKey, limit]) : null;
  return { payouts: page.payouts, nextCursor: next };
}

/**
 * POST /api/v1/admin/agents/{id}/payouts/{payoutId}/release: HELD → PENDING; the reconciler sends
 * it to the worker, which pays it although the agent is disabled. Releasing a payout released
 * before answers it as it is now (a retry after a lost answer); one never held is 409.
 */
export async function releasePayout(agentId: string | undefined, payoutId: string | undefined): Promise<Payout> {
  if (!isId('agent', agentId) || !isId('payout', payoutId)) throw notFound();
  const result = await releaseHeldPayout(agentId, payoutId, new Date());
  if (result.kind === 'missing') throw notFound();
  if (result.kind === 'not-held' && result.payout.releasedAt === undefined) throw notHeld();
  if (result.kind === 'released') logger().info('held payout released by the operator', { payoutId, agentId });
  return result.payout;
}

export interface CancelPayoutInput {
  agentId: string | undefined;
  payoutId: string | undefined;
  idempotencyKey: string;
}

/**
 * POST /api/v1/admin/agents/{id}/payouts/{payoutId}/cancel + Idempotency-Key: HELD → FAILED
 * (`cancelled by operator`), its gross back to the agent's balance, in one transaction with the
 * idempotency record. Only a held payout: one in flight may be moving money at its rail.
 */
export function cancelPayout(input: CancelPayoutInput): Promise<Payout | StoredReply> {
  const { agentId, payoutId, idempotencyKey } = input;
  if (!isId('agent', agentId) || !isId('payout', payoutId)) throw notFound();
  return idempotent(
    {
      scope: `${agentId}#payout-cancel`,
      key: idempotencyKey,
      request: { payoutId },
      rounds: CANCEL_ROUNDS,
      render: renderPayout,
    },
    async ({ now, record, replayIfUsed }) => {
      const refuse = async () => (await replayIfUsed()) ?? Promise.reject(notHeld());
      const payout = await getPayout(agentId, payoutId);
      if (!payout) throw notFound();
      if (payout.status !== 'HELD') return refuse();
      const final: Payout = {
        ...payout,
        status: 'FAILED',
        processedAt: now.toISOString(),
        updatedAt: now.toISOString(),
        failureReason: CANCELLED_BY_OPERATOR,
      };
      const result = await cancelHeldPayout(payout, record(final), now, payoutEvents(final, now));
      if (!result.committed) return refuse();
      logger().info('held payout cancelled by the operator; gross back to the agent', { payoutId, agentId, currency: payout.currency });
      return final;
    },
  );
}
