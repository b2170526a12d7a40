/**
 * The payer's item: its attributes and its state.
 *
 * The user item holds the balances, the money held in PENDING charges (`heldUSD`, `heldUSDC`), the
 * spending policy with its version, the user key's hash, and two spend counters: `spendDay` and
 * `spendMonth`, each a map `{p: <UTC day or month>, USD, USDC, "USD#<agentId>", …}` (an agent's
 * counter only while the policy gives that agent its own daily/monthly limit). A charge's debit of
 * it, conditioned on everything the charge was judged by, is built with the charge's other items
 * (store/charges/charge-items.ts `payerDebit`).
 *
 * Every charge records which counters it was added to (`Charge.counted`, also on its pending
 * marker), and giving its hold back lowers those and no others: an agent's counter that did not
 * exist, or did not count the charge, when the hold was made is never lowered by it
 * (store/charges/settlement-items.ts `releaseUserUpdate`).
 */
import type { Currency } from '../../core/money';
import type { SpendingPolicy } from '../../core/policy';
import type { PayerState } from '../../core/users';

export const heldAttribute = (currency: Currency): string => `held${currency}`;
/** An agent's own counter inside a period's map (`USD#<agentId>`). */
export const agentCounter = (currency: Currency, agentId: string): string => `${currency}#${agentId}`;

export interface UserUpdate {
  UpdateExpression: string;
  ConditionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
}

/** DynamoDB refuses names and values an expression does not use: keep only those it does. */
export function pruned(update: UserUpdate): UserUpdate {
  const text = `${update.UpdateExpression} ${update.ConditionExpression} `;
  const used = (token: string) => new RegExp(`${token}(?![A-Za-z0-9_])`).test(text);
  return {
    ...update,
    ExpressionAttributeNames: Object.fromEntries(Object.entries(update.ExpressionAttributeNames).filter(([k]) => used(k))),
    ExpressionAttributeValues: Object.fromEntries(Object.entries(update.ExpressionAttributeValues).filter(([k]) => used(k))),
  };
}

/** The payer state an item shows. */
export function payerStateOf(item: Record<string, unknown>): PayerState {
  const period = (name: string) => {
    const counters = item[name];
    return counters && typeof counters === 'object' && typeof (counters as { p?: unknown }).p === 'string'
      ? (counters as { p: string }).p
      : undefined;
  };
  return {
    policy: (item.policy as SpendingPolicy | undefined) ?? {},
    policyVersion: typeof item.policyVersion === 'number' ? item.policyVersion : 0,
    day: period('spendDay'),
    month: period('spendMonth'),
  };
}
