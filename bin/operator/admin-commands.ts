/**
 * What each `npm run admin` command does: one call of the use case the admin API calls, with the
 * input checked by the API's own schemas, so the CLI and the API accept the same input, answer the
 * same JSON and refuse with the same messages. Loaded only once the table is settled (the config
 * module reads the environment once).
 */
import { isNumber, LosslessNumber, parse, stringify } from 'lossless-json';
import { creditSchema } from '../../functions/api/request.schemas';
import { runLedgerAudit } from '../../functions/audit/ledger-audit';
import { ApiError } from '../../functions/core/errors';
import { type HttpResult, serialize } from '../../functions/http/response';
import { validate } from '../../functions/http/validation';
import { readAgent, updateAgentEnabled } from '../../functions/use-cases/agents';
import { checkIdempotencyKey } from '../../functions/use-cases/idempotency';
import { createUserWithKey, creditUserBalance, readUser } from '../../functions/use-cases/users';

export { createUserWithKey, readUser, runLedgerAudit };

/** What a command answered (JSON for stdout), and why it counts as a failure when it does. */
export interface Answer {
  json: string;
  failure?: string;
}

export const enableAgent = (agentId: string) => updateAgentEnabled(agentId, true);
export const disableAgent = (agentId: string) => updateAgentEnabled(agentId, false);

/**
 * Tops up a user, as `POST /admin/users/{id}/credits` does. `amount` is the decimal text the
 * operator typed; it reaches the use case as that exact text, never through a float.
 */
export function credit(userId: string, amount: string, currency: string, idempotencyKey: string): Promise<HttpResult> {
  // The API reads amounts as JSON number literals; text that is not one fails its schema the same way.
  const body = validate(creditSchema, { amount: isNumber(amount) ? new LosslessNumber(amount) : amount, currency });
  return creditUserBalance({ userId, idempotencyKey: checkIdempotencyKey(idempotencyKey), ...body });
}

/** An agent and its withdrawable balance, as the operator sees it. */
export const showAgent = readAgent;

/**
 * A use case's answer as the API would send it, indented for a terminal. Parsed and written with
 * lossless-json, so amounts keep their exact text.
 */
export function answer(result: HttpResult): Answer {
  const json = stringify(parse(result.rawBody ?? serialize(result.body ?? {})), undefined, 2) ?? 'null';
  if (result.statusCode < 400) return { json };
  const { error } = JSON.parse(json) as { error?: unknown };
  return { json, failure: typeof error === 'string' ? error : `status ${result.statusCode}` };
}

/** An ApiError in the words the API would use; anything else (DynamoDB unreachable, no table) with its name. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
