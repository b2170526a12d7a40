import { refuse } from '../messages/refusal';

/**
 * Opaque list cursors: base64url of a small JSON array. Each list decides what the array holds
 * and checks it with `accept`; anything unreadable or unaccepted is 400 `cursor is invalid`.
 */
export function encodeCursor(parts: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeCursor<T>(text: string, accept: (parts: unknown[]) => T | undefined): T {
  let accepted: T | undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(value)) accepted = accept(value);
  } catch {
    accepted = undefined;
  }
  if (accepted === undefined) throw refuse('cursorInvalid');
  return accepted;
}

/** Page size when a list request names none. */
export const DEFAULT_PAGE_LIMIT = 20;

/**
 * The page size of a list request. A cursor carries the `limit` it was made with, so its pages
 * line up with the ones before it: an explicit different `limit` next to it is 400
 * `cursor is invalid`; no `limit` means the cursor's.
 */
export function pageLimit(requested: number | undefined, cursorLimit: number | undefined): number {
  if (cursorLimit === undefined) return requested ?? DEFAULT_PAGE_LIMIT;
  if (requested !== undefined && requested !== cursorLimit) throw refuse('cursorInvalid');
  return cursorLimit;
}

/** A positive safe integer inside a decoded cursor. */
export const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 1;
