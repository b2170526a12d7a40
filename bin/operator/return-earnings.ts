/**
 * `npm run admin -- return-earnings <agentId>`: gives a (disabled) agent's earnings back to its
 * payers, charge by charge (docs/operator-cli.md, docs/lifecycle.md). It walks the agent's charges,
 * newest first, and refunds all that is left of each SUCCESS charge through the operator's refund
 * (`POST /api/v1/admin/agents/{id}/charges/{chargeId}/refund`): one transaction per charge, each
 * under the Idempotency-Key `return-earnings-<chargeId>`, so running it again (after an
 * interruption, or once a held payout was cancelled) returns nothing twice. The same walk runs over
 * the admin API or in-process on the table, through `EarningsApi`.
 */
import { parse, stringify } from 'lossless-json';
import type { Answer } from './answer';

/** The two calls the walk makes, answered as the CLI prints answers. */
export interface EarningsApi {
  /** A page of the agent's charges (`GET …/agents/{id}/charges?limit=100&cursor=`). */
  listCharges(agentId: string, cursor: string | undefined): Promise<Answer>;
  /** All that is left of one charge back to its payer (`POST …/charges/{chargeId}/refund`). */
  refund(agentId: string, chargeId: string, idempotencyKey: string): Promise<Answer>;
}

/** The Idempotency-Key of the walk's refund of one charge: the same on every run. */
export const returnKey = (chargeId: string) => `return-earnings-${chargeId}`;

interface ChargeRow {
  id: string;
  status: string;
  currency: string;
  amount: number;
  refundedAmount: number;
}

/**
 * Walks every charge of the agent and refunds what is left of each SUCCESS one. Answers
 * `{agentId, returned: [{chargeId, currency, refundedAmount}], refused: [{chargeId, error}]}`, a failure
 * when any refund was refused (too little balance: a payout holds it, or it was withdrawn), and stops
 * at once when a page cannot be read.
 */
export async function returnEarnings(agentId: string, api: EarningsApi): Promise<Answer> {
  const returned: unknown[] = [];
  const refused: { chargeId: string; error: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.listCharges(agentId, cursor);
    if (page.failure !== undefined) return page;
    const body = JSON.parse(page.json) as { data: ChargeRow[]; nextCursor: string | null };
    for (const charge of body.data) {
      // Decimal amounts of at most 6 places compare exactly as doubles; the refund reads its own.
      if (charge.status !== 'SUCCESS' || charge.refundedAmount >= charge.amount) continue;
      const answer = await api.refund(agentId, charge.id, returnKey(charge.id));
      if (answer.failure !== undefined) {
        refused.push({ chargeId: charge.id, error: answer.failure });
        continue;
      }
      // The refund's own figures, as exact text (lossless), not the list's.
      const refunded = parse(answer.json) as { currency: unknown; refundedAmount: unknown };
      returned.push({ chargeId: charge.id, currency: refunded.currency, refundedAmount: refunded.refundedAmount });
    }
    cursor = body.nextCursor ?? undefined;
  } while (cursor !== undefined);
  const json = stringify({ agentId, returned, refused }, undefined, 2) ?? '{}';
  return refused.length === 0 ? { json } : { json, failure: `${refused.length} charge(s) not returned: ${refused[0]?.error}` };
}
