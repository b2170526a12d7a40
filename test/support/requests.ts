/**
 * Builds a use case's input the way its handler does: from a JSON body through the route's own
 * request schema, so an amount is given as the literal a client would send (`'10.01'`).
 */
import type * as z from 'zod';
import { parseJsonBody } from '../../functions/http/body';

/** Parses `fields` (with `amount` as a JSON number literal) through `schema`; a 400 throws. */
export function viaSchema<S extends z.ZodType>(schema: S, fields: { amount: string } & Record<string, unknown>): z.infer<S> {
  const { amount, ...rest } = fields;
  const body = JSON.stringify({ ...rest, amount: '\u0000' }).replace('"\\u0000"', amount);
  return parseJsonBody({ method: 'POST', path: '/', headers: {}, query: {}, params: {}, body, requestId: 'test' }, schema);
}
