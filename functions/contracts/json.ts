/** The API's JSON: money as exact number literals, written without a float ever in between. */
import { LosslessNumber, stringify } from 'lossless-json';
import { type Currency, formatAmount, type Minor } from '../core/money';

/** A money amount as an exact JSON number literal (no float ever sits between). */
export function jsonAmount(minor: Minor, currency: Currency): LosslessNumber {
  return new LosslessNumber(formatAmount(minor, currency));
}

/** Serialises a body; LosslessNumber values are written as their exact text. */
export function serialize(body: unknown): string {
  return stringify(body) ?? 'null';
}
