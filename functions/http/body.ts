import { isLosslessNumber, parse } from 'lossless-json';
import type * as z from 'zod';
import { config } from '../config';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../core/errors';
import type { HttpRequest } from './request';
import { validate } from './validation';

/**
 * Parses a JSON body keeping every number as its literal text (lossless-json), so money is read
 * from exactly what the client sent; then validates it. 415 when the body is declared as anything
 * but JSON (a form post is never read as JSON by accident); 413 over MAX_BODY_BYTES; 400
 * `invalid json body` for anything that is not a JSON object.
 */
export function parseJsonBody<S extends z.ZodType>(req: HttpRequest, schema: S): z.infer<S> {
  if (!isJsonContentType(req.headers['content-type'])) throw new UnsupportedMediaTypeError();
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > config().MAX_BODY_BYTES) throw new PayloadTooLargeError();
  let value: unknown;
  try {
    value = parse(text);
  } catch {
    throw new ValidationError('invalid json body');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) {
    throw new ValidationError('invalid json body');
  }
  return validate(schema, value);
}

/**
 * `application/json`, with any parameters (`; charset=utf-8`), in any case. An absent header is
 * accepted: a client that sends no type has not declared anything else.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}
