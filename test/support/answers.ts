/**
 * Use cases answer outcomes (functions/operations/ renders them); tests that call a use case
 * directly and check its answer read it the way the route sends it: `answered` renders an outcome
 * with the operation's own `render`, or a stored replay as it is sent.
 */
import { type ApiResult, StoredReply } from '../../functions/contracts/api';
import { serialize } from '../../functions/contracts/json';
import { createChargeOperation } from '../../functions/operations/charges';
import { type CreateChargeInput, createCharge as createChargeUseCase } from '../../functions/use-cases/charges';

/** The answer as the route sends it: status, body and its exact JSON text. */
export type Answered = ApiResult & { rawBody: string };

export function answered<O>(outcome: O | StoredReply, render: (outcome: O) => ApiResult): Answered {
  const result = outcome instanceof StoredReply ? outcome.toResult() : render(outcome);
  const rawBody = result.rawBody ?? serialize(result.body ?? {});
  return { ...result, rawBody, body: result.body ?? JSON.parse(rawBody) };
}

/** `createCharge` (the use case), answered as POST /api/v1/agents/charges answers it. */
export async function createCharge(input: CreateChargeInput): Promise<Answered> {
  return answered(await createChargeUseCase(input), createChargeOperation.render);
}
