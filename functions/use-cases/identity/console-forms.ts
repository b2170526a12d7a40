/**
 * What the console's forms need from the table beyond the API's use cases (DESIGN §21, §25: an
 * adapter never reaches into the store): one-time form keys, and the account key a form acts with.
 *
 * One-time form keys: a form that moves money or makes a secret renders a fresh key; its submit
 * runs through the API's own idempotency mechanism (idempotency.ts), with the record written in the
 * same transaction as what the form does. A double submit (a double click, a reload of the answer)
 * therefore acts once; the second answer is the first one's stored record.
 *
 * A secret (grant key, account key, webhook secret) is never part of the stored record: it is
 * shown once, by the request that made it. A replay says what was made, so the page can say how to
 * get a new secret if the first answer was lost (a browser shows only the last of two submits).
 */
import { StoredReply } from '../../contracts/api';
import { IdempotencyRecordExistsError } from '../../core/errors';
import { refuse } from '../../messages/refusal';
import { idempotencyPut } from '../../store/idempotency.repository';
import type { ConditionedItem } from '../../store/identity/grant.repository';
import { getUserKeyHash } from '../../store/identity/user.repository';
import { type NamedItem, PRECEDENCE } from '../../store/transact';
import { checkIdempotencyKey, idempotent } from '../idempotency';

/** What a once-only form did: this request acted (`value`), or an earlier submit did (`stored`). */
export type Once<T, S> = { replayed: false; value: T } | { replayed: true; stored: S };

/**
 * This submit's record (what a replay will see, `stored`, never a secret) as an item of the
 * transaction of what the form does; `conditioned` gives the same item as a create's conditioned
 * item (issueGrant's `also`), its failed condition a replay.
 */
export interface OnceRecord<S> {
  (stored: S): NamedItem;
  conditioned(stored: S): ConditionedItem;
}

/**
 * Runs `act` at most once per form key (`key`: the form's one-time key as submitted; a missing or
 * malformed one is refused). `act` must join `record`'s item to its transaction. `request`: the
 * form's values that make two submits "the same"; a reused key with other values is 422 (a form
 * kept from before, submitted changed). `form` names the form, so two forms' keys never meet.
 */
export async function onceOnly<T, S>(
  userId: string,
  form: string,
  key: string | undefined,
  request: Record<string, string | number>,
  act: (record: OnceRecord<S>) => Promise<T>,
): Promise<Once<T, S>> {
  let checked: string;
  try {
    checked = checkIdempotencyKey(key);
  } catch {
    throw refuse('consoleFormKeyInvalid');
  }
  const outcome = await idempotent<{ acted: T } | { stored: S }>(
    {
      scope: `${userId}#console-${form}`,
      key: checked,
      request,
      rounds: 3,
      // Only what a replay will see is ever stored (`stored`), never what the form made.
      render: (done) => ({ statusCode: 200, body: 'stored' in done ? done.stored : null }),
    },
    async (step) => {
      // Before anything leaves (a PayPal order, a key made): a second submit after the first
      // finished acts not at all, not even outside the table.
      const earlier = await step.replayIfUsed();
      if (earlier) return { stored: JSON.parse(earlier.rawBody) as S };
      let recorded = false;
      const item = (stored: S): NamedItem => {
        recorded = true;
        return idempotencyPut(step.record({ stored }), step.now);
      };
      const record: OnceRecord<S> = Object.assign(item, {
        conditioned: (stored: S): ConditionedItem => ({
          item: item(stored).item,
          refusal: () => new IdempotencyRecordExistsError(undefined),
          precedence: PRECEDENCE.replay,
        }),
      });
      const acted = await act(record);
      if (!recorded) throw new Error(`console form ${form} acted without its idempotency record`);
      return { acted };
    },
  );
  if (outcome instanceof StoredReply) return { replayed: true, stored: JSON.parse(outcome.rawBody) as S };
  if ('acted' in outcome) return { replayed: false, value: outcome.acted };
  return { replayed: true, stored: outcome.stored };
}

/**
 * The account key a form acts with (DESIGN §24): the one that opened a key-opened session (never
 * a newer one: a rotation ends the session, and a form racing it is refused by the key's
 * condition), else the payer's current one; undefined for a payer without one.
 */
export async function actingAccountKeyHash(userId: string, openedWith: string | undefined): Promise<string | undefined> {
  return openedWith ?? (await getUserKeyHash(userId));
}
