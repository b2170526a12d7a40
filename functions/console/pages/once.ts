/**
 * One-time form keys on the console's side (DESIGN §21): a form that moves money or makes a secret
 * renders a fresh key (`onceField`); its submit acts at most once per key, through the use case
 * (use-cases/identity/console-forms.ts `onceOnly`), which writes the record in the same transaction as what
 * the form does.
 */
import { type Once, type OnceRecord, onceOnly } from '../../use-cases/identity/console-forms';
import type { ConsoleSession } from '../page';
import { ONCE_FIELD } from './ui';

export type { Once };

/**
 * Runs `act` at most once per the form's key (`fields`: the submitted form). `request`: the form's
 * values that make two submits "the same"; a reused key with other values is 422.
 */
export function once<T, S>(
  session: ConsoleSession,
  form: string,
  fields: Readonly<Record<string, string>>,
  request: Record<string, string | number>,
  act: (record: OnceRecord<S>) => Promise<T>,
): Promise<Once<T, S>> {
  return onceOnly(session.userId, form, fields[ONCE_FIELD], request, act);
}
