import { isLosslessNumber, parse } from 'lossless-json';
import type * as z from 'zod';
import { config } from '../config';
import { type ApiRequest, isJsonContentType } from '../contracts/api';
import { validate } from '../contracts/validation';
import { refuse } from '../messages/refusal';

/**
 * Parses a JSON body keeping every number as its literal text (lossless-json), so money is read
 * from exactly what the client sent; then validates it. 415 when the body is declared as anything
 * but JSON (a form post is never read as JSON by accident); 413 over MAX_BODY_BYTES; 400
 * `invalid json body` for anything that is not a JSON object.
 */
export function parseJsonBody<S extends z.ZodType>(req: ApiRequest, schema: S): z.infer<S> {
  if (!isJsonContentType(req.headers['content-type'])) throw refuse('unsupportedMediaType', JSON_CONTENT_TYPE);
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > config().MAX_BODY_BYTES) throw refuse('bodyTooLarge');
  let value: unknown;
  try {
    value = parse(text);
  } catch {
    throw refuse('invalidJsonBody');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || isLosslessNumber(value)) {
    throw refuse('invalidJsonBody');
  }
  return validate(schema, value);
}

/**
 * Parses an HTML form's body (`application/x-www-form-urlencoded`, what a plain `<form
 * method="post">` sends) and validates it. 415 for any other declared type, and for none (a
 * browser always declares a form's type); 413 over `maxBytes`, which a form route keeps far below
 * MAX_BODY_BYTES; 400 when a field is given twice (which one would count is anyone's guess).
 */
export function parseFormBody<S extends z.ZodType>(req: ApiRequest, schema: S, maxBytes: number): z.infer<S> {
  const mediaType = req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== FORM_CONTENT_TYPE) throw refuse('unsupportedMediaType', FORM_CONTENT_TYPE);
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > maxBytes) throw refuse('bodyTooLarge');
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) throw refuse('fieldGivenTwice', name);
    fields[name] = value;
  }
  return validate(schema, fields);
}

const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
const JSON_CONTENT_TYPE = 'application/json';
