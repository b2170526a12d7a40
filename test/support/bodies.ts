/**
 * Typed answers. A test reads an answer's body through the zod response schema the OpenAPI
 * document is generated from (functions/contracts/response.schemas.ts and responses/), so its type is the
 * contract's (`z.output` of the schema) rather than one written by hand, and the parse checks the
 * body against the contract once more, naming the field that differs:
 *
 *   const charge = expectBody(await t.call('POST', '/api/v1/agents/charges', ...), chargeBody, 201);
 *   charge.status; // 'PENDING' | 'SUCCESS' | 'FAILED' | 'EXPIRED'
 */
import type * as z from 'zod';
import * as kernel from '../../functions/contracts/response.schemas';
import * as accounts from '../../functions/contracts/responses/accounts';
import * as charges from '../../functions/contracts/responses/charges';
import * as grants from '../../functions/contracts/responses/grants';
import * as payouts from '../../functions/contracts/responses/payouts';
import * as topups from '../../functions/contracts/responses/topups';
import * as webhooks from '../../functions/contracts/responses/webhooks';
import type { Reply } from './http';

/** The response schemas, by their names in functions/contracts/response.schemas.ts and its responses/ per area. */
export const schemas = { ...kernel, ...charges, ...accounts, ...payouts, ...topups, ...webhooks, ...grants };

/**
 * The answer's body as `schema` describes it. With `status`, an answer with another status throws
 * first, with its text (an error body would not parse, and its message is what the reader needs).
 */
export function expectBody<S extends z.ZodType>(
  res: Pick<Reply<unknown>, 'status' | 'body' | 'text'>,
  schema: S,
  status?: number,
): z.output<S> {
  if (status !== undefined && res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  const parsed = schema.safeParse(res.body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ');
    throw new Error(`the ${res.status} answer's body is not its schema's: ${issues}\n${res.text}`);
  }
  return parsed.data;
}
