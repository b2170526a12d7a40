import { ValidationError } from '../core/errors';

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
  if (accepted === undefined) throw new ValidationError('cursor is invalid');
  return accepted;
}
