import type * as z from 'zod';
import type { ApiRequest } from '../contracts/api';
import { validate } from '../contracts/validation';
import { parseJsonBody } from '../http/body';

/** A JSON body whose fields are all optional: an absent or empty body is `{}`, anything else is read as JSON. */
export function parseOptionalJsonBody<S extends z.ZodType>(req: ApiRequest, schema: S): z.infer<S> {
  if (req.body === undefined || req.body.trim() === '') return validate(schema, {});
  return parseJsonBody(req, schema);
}
