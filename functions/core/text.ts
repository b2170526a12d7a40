/**
 * Rules for free text a client gives us and someone else reads: agent names (shown to users on
 * approval pages and in their history) and charge descriptions. Text that renders differently
 * from what it says (bidi overrides, invisible characters, look-alike letters) is how a
 * payment page gets spoofed, so it is refused rather than cleaned. The look-alike skeleton of a
 * name is in core/name-skeleton.ts, apart: its table (~20 KB) is only for the functions that
 * register or rename agents, not every bundle that validates a description.
 */
import { TEXT_PROBLEMS } from '../messages/problems';

/** Control characters (C0, DEL, C1). */
const CONTROL = /\p{Cc}/u;
/** Format characters: zero-width joiners and spaces, soft hyphen, bidi marks and overrides, … */
const FORMAT = /\p{Cf}/u;
/** The bidi embeddings, overrides and isolates that reorder how text renders (Trojan Source). */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

/**
 * Why a description is unacceptable ("must …", to follow the field's name), or undefined.
 * Well-formed UTF-16 first: a lone surrogate cannot be stored or shown faithfully.
 */
export function descriptionProblem(text: string): string | undefined {
  if (!text.isWellFormed()) return TEXT_PROBLEMS.illFormed;
  if (CONTROL.test(text)) return TEXT_PROBLEMS.control;
  if (BIDI_CONTROL.test(text)) return TEXT_PROBLEMS.bidiControl;
  return undefined;
}

/** Why an (already NFKC-normalised) agent name is unacceptable, or undefined. */
export function nameProblem(name: string): string | undefined {
  if (!name.isWellFormed()) return TEXT_PROBLEMS.illFormed;
  if (CONTROL.test(name) || FORMAT.test(name)) return TEXT_PROBLEMS.invisibleOrControl;
  return undefined;
}
