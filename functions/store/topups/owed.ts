/**
 * What a payer owes (docs/topups.md, reversals): when PayPal takes back a credited top-up
 * (PAYMENT.CAPTURE.REVERSED / REFUNDED) and the balance no longer holds it, the shortfall is kept
 * on the user's item as `owed<currency>` in minor units. While anything is owed in a currency, no
 * charge in it is accepted (the condition below, inside the charge's own transaction), and the
 * next top-up in it pays the debt first (store/topups/topup-completion.repository.ts `completionItems`).
 */
import type { Currency } from '../../core/money';

export const owedAttribute = (currency: Currency): string => `owed${currency}`;

/** A condition on the user's item: nothing owed in `currency`. */
export function noDebt(currency: Currency): { condition: string; names: Record<string, string>; values: Record<string, unknown> } {
  return {
    condition: '(attribute_not_exists(#owed) OR #owed <= :noDebt)',
    names: { '#owed': owedAttribute(currency) },
    values: { ':noDebt': 0 },
  };
}
