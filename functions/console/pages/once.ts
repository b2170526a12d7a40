/**
 * One-time form keys (DESIGN §21): a form that moves money or makes a secret renders a fresh key;
 * its submit runs through the API's own idempotency mechanism (use-cases/idempotency.ts), with the
 * record written in the same transaction as what the form does. A double submit (a double click, a
 * reload of the answer) therefore acts once; the second answer is the first one's stored record.
 *
 * A secret (grant key, account key, webhook secret) is never part of the stored record: it is
 * shown once, by the request that made it. A replay says what was made and how to get a new
 * secret if the first answer was lost (a browser shows only the last of two submits).
 */
import { refuse } from '../../messages/refusal';
import { idempotencyPut } from '../../store/idempotency.repository';
import type { NamedItem } from '../../store/transact';
import { type Answer, checkIdempotencyKey, idempotentCommand } from '../../use-cases/idempotency';
import type { ConsoleSession } from '../page';
import { ONCE_FIELD, wasReplayed } from './ui';

/** What a once-only form did: this request acted (`value`), or an earlier submit did (`stored`). */
export type Once<T, S> = { replayed: false; value: T } | { replayed: true; stored: S };

/**
 * Runs `act` at most once per form key. `act` gets `record(stored)`: the transaction item that
 * writes this submit's record (what a replay will see, `stored`, never a secret) — it must join
 * the transaction of what the form does. `request`: the form's values that make two submits "the
 * same"; a reused key with other values is 422 (a form kept from before, submitted changed).
 */
export async function once<T, S>(
  session: ConsoleSession,
  form: string,
  fields: Readonly<Record<string, string>>,
  request: Record<string, string | number>,
  act: (record: (stored: S) => NamedItem) => Promise<T>,
): Promise<Once<T, S>> {
  let key: string;
  try {
    key = checkIdempotencyKey(fields[ONCE_FIELD]);
  } catch {
    throw refuse('consoleFormKeyInvalid');
  }
  let value: { v: T } | undefined;
  const result = await idempotentCommand<S>(
    { scope: `${session.userId}#console-${form}`, key, request, rounds: 3, render: (stored) => ({ statusCode: 200, body: stored }) },
    async (attempt) => {
      // Before anything leaves (a PayPal order, a key made): a second submit after the first
      // finished acts not at all, not even outside the table.
      const earlier = await attempt.replayIfUsed();
      if (earlier) return earlier;
      let answer: Answer | undefined;
      value = {
        v: await act((stored) => {
          answer = attempt.answer(stored);
          return idempotencyPut(answer.record, attempt.now);
        }),
      };
      if (!answer) throw new Error(`console form ${form} acted without its idempotency record`);
      return answer.result;
    },
  );
  if (!wasReplayed(result) && value) return { replayed: false, value: value.v };
  return { replayed: true, stored: JSON.parse(result.rawBody ?? 'null') as S };
}
