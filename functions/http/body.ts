import { isLosslessNumber, parse } from 'lossless-json';
import type * as z from 'zod';
import { config } from '../config';
import { type ApiRequest, isJsonContentType } from '../contracts/api';
import { validate } from '../contracts/validation';
import { type Refusal, refuse } from '../messages/refusal';

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
  return validate(schema, readFormFields(req, { maxBytes }));
}

/** The refusals of a body of the wrong type or size: the API's 415 and 413 unless a route's own (the console's 400s). */
export interface BodyRefusals {
  wrongType?: () => Refusal;
  tooLarge?: () => Refusal;
}

/** A form's fields, not yet validated (parseFormBody; the console's pages read them by name). */
export function readFormFields(req: ApiRequest, opts: { maxBytes: number } & BodyRefusals): Record<string, string> {
  if (mediaTypeOf(req) !== FORM_CONTENT_TYPE) throw opts.wrongType?.() ?? refuse('unsupportedMediaType', FORM_CONTENT_TYPE);
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > opts.maxBytes) throw opts.tooLarge?.() ?? refuse('bodyTooLarge');
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(fields, name)) throw refuse('fieldGivenTwice', name);
    fields[name] = value;
  }
  return fields;
}

/**
 * A small JSON object of a browser's script (the console's passkey ceremonies), numbers as plain
 * JavaScript numbers: no money is in it, and WebAuthn's libraries read it as the browser wrote it.
 * Exactly `application/json` (an absent type is refused, unlike the API's); 400 `invalid json body`
 * for anything but an object.
 */
export function readJsonObject(req: ApiRequest, opts: { maxBytes: number } & BodyRefusals): Record<string, unknown> {
  if (mediaTypeOf(req) !== JSON_CONTENT_TYPE) throw opts.wrongType?.() ?? refuse('unsupportedMediaType', JSON_CONTENT_TYPE);
  const text = req.body ?? '';
  if (Buffer.byteLength(text, 'utf8') > opts.maxBytes) throw opts.tooLarge?.() ?? refuse('bodyTooLarge');
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through to the refusal.
  }
  throw refuse('invalidJsonBody');
}

/** The declared media type, lower-cased, without parameters; undefined when none was declared. */
export const mediaTypeOf = (req: ApiRequest): string | undefined => req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();

const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';
const JSON_CONTENT_TYPE = 'application/json';
