import type * as z from 'zod';
import { parseJsonBody } from '../http/body';
import type { HttpRequest } from '../http/request';
import { validate } from '../http/validation';

/** A JSON body whose fields are all optional: an absent or empty body is `{}`, anything else is read as JSON. */
export function parseOptionalJsonBody<S extends z.ZodType>(req: HttpRequest, schema: S): z.infer<S> {
  if (req.body === undefined || req.body.trim() === '') return validate(schema, {});
  return parseJsonBody(req, schema);
}
