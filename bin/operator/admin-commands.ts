/**
 * What each `npm run admin` command does: one call of the use case the admin API calls, with the
 * input checked by the API's own schemas, so the CLI and the API accept the same input, answer the
 * same JSON and refuse with the same messages. Loaded only once the table is settled (the config
 * module reads the environment once).
 */
import { isNumber, LosslessNumber } from 'lossless-json';
import { runLedgerAudit } from '../../functions/audit/ledger-audit';
import type { ApiResult } from '../../functions/contracts/api';
import { serialize } from '../../functions/contracts/json';
import { creditSchema, listAgentsQuerySchema } from '../../functions/contracts/request.schemas';
import { validate } from '../../functions/contracts/validation';
import { ApiError } from '../../functions/core/errors';
import { listAgentsForOperator, readAgent, updateAgentEnabled } from '../../functions/use-cases/agents';
import { readCharge } from '../../functions/use-cases/charges';
import { checkIdempotencyKey } from '../../functions/use-cases/idempotency';
import { createUserWithKey, creditUserBalance, readUser, rotateUserKeyByOperator } from '../../functions/use-cases/users';
import { type Answer, answer as answerText } from './answer';

export { createUserWithKey, readUser, rotateUserKeyByOperator, runLedgerAudit };

export const enableAgent = (agentId: string) => updateAgentEnabled(agentId, true);
export const disableAgent = (agentId: string) => updateAgentEnabled(agentId, false);

/**
 * Tops up a user, as `POST /admin/users/{id}/credits` does. `amount` is the decimal text the
 * operator typed; it reaches the use case as that exact text, never through a float.
 */
export function credit(userId: string, amount: string, currency: string, idempotencyKey: string): Promise<ApiResult> {
  // The API reads amounts as JSON number literals; text that is not one fails its schema the same way.
  const body = validate(creditSchema, { amount: isNumber(amount) ? new LosslessNumber(amount) : amount, currency });
  return creditUserBalance({ userId, idempotencyKey: checkIdempotencyKey(idempotencyKey), ...body });
}

/** An agent and its withdrawable balance, as the operator sees it. */
export const showAgent = readAgent;

/** Agents newest first, as `GET /admin/agents?enabled=&limit=&cursor=` lists them (the query checked by the API's schema). */
export const listAgents = (query: Record<string, string>) => listAgentsForOperator(validate(listAgentsQuerySchema, query));

/** Any agent's charge, as `GET /admin/charges/{id}` reads it. */
export const showCharge = (chargeId: string) => readCharge(undefined, chargeId);

/** A use case's answer as the API would send it (answer.ts prints it). */
export function answer(result: ApiResult): Answer {
  return answerText(result.statusCode, result.rawBody ?? serialize(result.body ?? {}));
}

/** An ApiError in the words the API would use; anything else (DynamoDB unreachable, no table) with its name. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
