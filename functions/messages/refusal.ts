/**
 * A refusal: a catalogue entry (catalogue.ts) and what its text is made of, thrown (or returned in
 * an outcome) wherever the service decides to refuse. It carries no status of its own: the
 * renderer (contracts/outcome.ts) reads the entry. Anything thrown that is not a Refusal is a bug:
 * a 500 `internal error`, its cause logged, never echoed.
 */
import { type FieldProblem, REFUSALS, type RefusalArgs, type RefusalCode, type RefusalEntry, refusalText } from './catalogue';

export class Refusal<C extends RefusalCode = RefusalCode> extends Error {
  readonly code: C;
  readonly args: RefusalArgs<C>;
  /** Seconds until a retry may succeed, when this refusal knows better than its entry (a rate's window). */
  readonly retryAfter: number | undefined;
  /** A refused input's problems, field by field, when the refusal knows them (contracts/validation.ts). */
  readonly #problems: readonly FieldProblem[] | undefined;

  constructor(code: C, args: RefusalArgs<C>, options: { cause?: unknown; retryAfter?: number; problems?: readonly FieldProblem[] } = {}) {
    super(refusalText(code, ...args), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'Refusal';
    this.code = code;
    this.args = args;
    this.retryAfter = options.retryAfter;
    this.#problems = options.problems;
  }

  /**
   * What the refusal says about the request's fields, as data: a refused input's problems, or the
   * one field a refusal `aboutField` names (catalogue.ts); empty when it names none. A page words
   * these itself, with its own labels and units, rather than rewrite the text.
   */
  get problems(): readonly FieldProblem[] {
    if (this.#problems) return this.#problems;
    const entry: RefusalEntry = REFUSALS[this.code];
    if (entry.field === undefined || entry.problem === undefined) return [];
    const words = (entry.problem as (...a: unknown[]) => string)(...this.args);
    return [{ field: entry.field, kind: 'other', words, separator: entry.separator ?? ' ' }];
  }

  /** The catalogue's status for this refusal (what the renderer answers with). */
  get statusCode(): number {
    return REFUSALS[this.code].status;
  }
}

/** The refusal `code`, its text made of `args`. */
export function refuse<C extends RefusalCode>(code: C, ...args: RefusalArgs<C>): Refusal<C> {
  return new Refusal(code, args);
}

/** Whether `error` is a refusal, and (given codes) one of those. */
export function isRefusal<C extends RefusalCode>(error: unknown, ...codes: C[]): error is Refusal<C> {
  return error instanceof Refusal && (codes.length === 0 || (codes as RefusalCode[]).includes(error.code));
}
