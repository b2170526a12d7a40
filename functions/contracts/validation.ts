import { isLosslessNumber, type LosslessNumber } from 'lossless-json';
import * as z from 'zod';
import { FIELD_PROBLEMS, type FieldProblem } from '../messages/catalogue';
import { Refusal } from '../messages/refusal';

/** A field the input lacks (its issue carries no input: zod's reportInput is on, see `validate`). */
const isMissing = (issue: z.core.$ZodIssue) => issue.code !== 'unrecognized_keys' && issue.path.length > 0 && issue.input === undefined;

/** A field's problem as data: the field's path, its kind and bound, and the API's words for it. */
function problemOf(issue: z.core.$ZodIssue): FieldProblem {
  const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
  const problem = (words: string, kind: FieldProblem['kind'] = 'other', bound?: number): FieldProblem =>
    bound === undefined ? { field, kind, words, separator: ' ' } : { field, kind, bound, words, separator: ' ' };
  if (isMissing(issue)) return problem(FIELD_PROBLEMS.required, 'required');
  switch (issue.code) {
    case 'invalid_type':
      return problem(FIELD_PROBLEMS.ofType(article(issue.expected)));
    case 'invalid_value':
      return problem(FIELD_PROBLEMS.oneOf(issue.values.map(String)));
    case 'too_big':
      if (issue.origin === 'string') return problem(FIELD_PROBLEMS.atMostCharacters(Number(issue.maximum)));
      // A number's bound in the schema's own words ("must be at most 604800"); a page may show it in its units.
      if (issue.origin === 'number') return problem(issue.message, 'atMost', Number(issue.maximum));
      break;
    case 'too_small':
      if (issue.origin === 'string') {
        return problem(issue.minimum === 1 ? FIELD_PROBLEMS.notEmpty : FIELD_PROBLEMS.atLeastCharacters(Number(issue.minimum)));
      }
      if (issue.origin === 'number') return problem(issue.message, 'atLeast', Number(issue.minimum));
      break;
    case 'invalid_format':
      if (issue.format === 'email') return problem(FIELD_PROBLEMS.email);
      if (issue.format === 'url') return problem(FIELD_PROBLEMS.httpUrl);
      break;
  }
  // Schemas give their own messages in the form "must be …".
  return problem(issue.message);
}

/**
 * A refused input's problems, field by field: each unknown field on its own (by its full path,
 * `daily.EUR`), every other issue as it comes.
 */
export function problemsOf(issues: readonly z.core.$ZodIssue[]): FieldProblem[] {
  return issues.flatMap((issue): FieldProblem[] =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((k) => ({ field: [...issue.path, k].join('.'), kind: 'unknown', words: '', separator: ' ' }))
      : [problemOf(issue)],
  );
}

function article(expected: string): string {
  if (expected === 'object') return 'a JSON object';
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/**
 * How a reader names fields and shows bounds. The API's own: the JSON path and the schema's units;
 * a page passes its labels (`Per charge`) and units (a bound in seconds shown in minutes).
 */
export interface Wording {
  label?: (field: string) => string | undefined;
  bound?: (field: string, bound: number) => number | undefined;
}

/** One problem in a reader's words: "currency must be one of USD, USDC". */
export function describeProblem(problem: FieldProblem, wording: Wording = {}): string {
  const label = wording.label?.(problem.field) ?? problem.field;
  if (problem.kind === 'unknown') return `${FIELD_PROBLEMS.unknown} ${label}`;
  const bound = problem.bound === undefined ? undefined : wording.bound?.(problem.field, problem.bound);
  const words =
    bound === undefined ? problem.words : problem.kind === 'atLeast' ? FIELD_PROBLEMS.atLeast(bound) : FIELD_PROBLEMS.atMost(bound);
  return `${label}${problem.separator}${words}`;
}

/**
 * The one message for a refused input: its first problem, except that unknown fields always come
 * first, with every field that is missing beside them. A misspelt field (`amont`) is both: naming
 * only `amount is required` would leave the caller looking for what they did send.
 */
export function describeProblems(problems: readonly FieldProblem[], wording: Wording = {}): string {
  const first = problems[0];
  if (!first) return FIELD_PROBLEMS.invalidRequest;
  const unknown = problems.filter((p) => p.kind === 'unknown');
  if (unknown.length === 0) return describeProblem(first, wording);
  const fields = unknown.map((p) => wording.label?.(p.field) ?? p.field);
  const missing = problems.filter((p) => p.kind === 'required').map((p) => describeProblem(p, wording));
  return [`${FIELD_PROBLEMS.unknown} ${fields.join(', ')}`, ...missing].join('; ');
}

/** Validates with a schema built once at module scope; a refusal becomes a 400 (describeProblems), its problems kept. */
export function validate<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  // Again with each issue's input, which the message needs ("is required" or "must be …"). Asked
  // for on every parse, zod's reportInput made a valid charge body's parse 3× slower (6 → 2 µs),
  // so only a refused request pays for it, and the schemas are pure: the second parse fails alike.
  const reported = schema.safeParse(input, { reportInput: true });
  const problems = problemsOf((reported.success ? parsed : reported).error.issues);
  throw new Refusal('invalidInput', [describeProblems(problems)], { problems });
}

/** A JSON number that must be a whole number (a count, seconds): its literal read exactly. */
export const integerLiteral = z
  .custom<LosslessNumber>((v) => isLosslessNumber(v), { message: FIELD_PROBLEMS.wholeNumber })
  .transform((v) => v.value)
  .pipe(z.string().regex(/^-?\d+$/, { error: FIELD_PROBLEMS.wholeNumber }))
  .transform(Number);

/** A JSON number kept as its literal text (see http/body.ts), e.g. "1.50". */
export const amountLiteral = z
  .custom<LosslessNumber>((v) => isLosslessNumber(v), { message: FIELD_PROBLEMS.number })
  .transform((v) => v.value);
