import { isLosslessNumber, type LosslessNumber } from 'lossless-json';
import * as z from 'zod';
import { refuse } from '../messages/refusal';

/** A field the input lacks (its issue carries no input: zod's reportInput is on, see `validate`). */
const isMissing = (issue: z.core.$ZodIssue) => issue.code !== 'unrecognized_keys' && issue.path.length > 0 && issue.input === undefined;

/** Human message for the first zod issue, naming the field: "currency must be one of USD, USDC". */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  if (isMissing(issue)) return `${field} is required`;
  switch (issue.code) {
    case 'unrecognized_keys':
      // Nested ones by their full path: `unknown field: daily.EUR`.
      return `unknown field: ${issue.keys.map((k) => [...issue.path, k].join('.')).join(', ')}`;
    case 'invalid_type':
      return `${field} must be ${article(issue.expected)}`;
    case 'invalid_value':
      return `${field} must be one of ${issue.values.map(String).join(', ')}`;
    case 'too_big':
      if (issue.origin === 'string') return `${field} must be at most ${issue.maximum} characters`;
      break;
    case 'too_small':
      if (issue.origin === 'string') {
        return issue.minimum === 1 ? `${field} must not be empty` : `${field} must be at least ${issue.minimum} characters`;
      }
      break;
    case 'invalid_format':
      if (issue.format === 'email') return `${field} must be a valid email address`;
      if (issue.format === 'url') return `${field} must be a valid http(s) URL`;
      break;
  }
  // Schemas give their own messages in the form "must be …".
  return `${field} ${issue.message}`;
}

function article(expected: string): string {
  if (expected === 'object') return 'a JSON object';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/**
 * The one message for a refused input: its first problem, except that unknown fields always come
 * first, with every field that is missing beside them. A misspelt field (`amont`) is both: naming
 * only `amount is required` would leave the caller looking for what they did send.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const first = issues[0];
  if (!first) return 'invalid request';
  const unknown = issues.filter((issue) => issue.code === 'unrecognized_keys');
  if (unknown.length === 0) return describeIssue(first);
  const fields = unknown.flatMap((issue) => issue.keys.map((k) => [...issue.path, k].join('.')));
  return [`unknown field: ${fields.join(', ')}`, ...issues.filter(isMissing).map(describeIssue)].join('; ');
}

/** Validates with a schema built once at module scope; a refusal becomes a 400 (describeIssues). */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  // Again with each issue's input, which the message needs ("is required" or "must be …"). Asked
  // for on every parse, zod's reportInput made a valid charge body's parse 3× slower (6 → 2 µs),
  // so only a refused request pays for it, and the schemas are pure: the second parse fails alike.
  const reported = schema.safeParse(input, { reportInput: true });
  throw refuse('invalidInput', describeIssues((reported.success ? parsed : reported).error.issues));
}

/** A JSON number that must be a whole number (a count, seconds): its literal read exactly. */
export const integerLiteral = z
  .custom<LosslessNumber>((v) => isLosslessNumber(v), { message: 'must be a whole number' })
  .transform((v) => v.value)
  .pipe(z.string().regex(/^-?\d+$/, { error: 'must be a whole number' }))
  .transform(Number);

/** A JSON number kept as its literal text (see http/body.ts), e.g. "1.50". */
export const amountLiteral = z
  .custom<LosslessNumber>((v) => isLosslessNumber(v), { message: 'must be a number' })
  .transform((v) => v.value);
