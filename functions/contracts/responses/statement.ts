/** The payer's statement (DESIGN §26, docs/statement.md): its rows, each with the balance after it. */
import * as z from 'zod';
import { STATEMENT_TYPES } from '../../core/statement';
import { amount, component, currency, timestamp } from '../response.schemas';

export const statementRowBody = component(
  'StatementRow',
  z.strictObject({
    id: z
      .string()
      .regex(/^st[0-9a-z]{26}$/)
      .meta({ description: 'The row\'s id: "st" + a lower-case ULID (time order).', examples: ['st01jhx3k6v1f8q2n7c9m4p5r6s7'] }),
    createdAt: timestamp,
    type: z.enum(STATEMENT_TYPES).meta({
      description:
        'topup, credit (the operator), refund and hold_release add to the available balance; charge, hold (a hold or a charge ' +
        'waiting for approval), x402_purchase and reversal (PayPal took a top-up back) take from it.',
    }),
    amount: amount('Signed: negative for a debit of the available balance.'),
    currency,
    balanceAfter: amount('The available balance in this currency right after this row.'),
    status: z.string().meta({
      description: "The referenced record's status right after the movement (SUCCESS, PENDING, FAILED, EXPIRED, REFUNDED, COMPLETED).",
    }),
    description: z.string(),
    counterparty: z.strictObject({
      kind: z.enum(['agent', 'seller', 'rail', 'operator']),
      id: z.string(),
      name: z.string(),
    }),
    grantId: z.string().nullable().meta({ description: 'The grant the charge was made under; null otherwise.' }),
    reference: z.string().meta({ description: 'The charge, purchase (xp…), top-up, credit or PayPal refund id the row belongs to.' }),
  }),
);

export const statementBody = component(
  'Statement',
  z.strictObject({
    data: z.array(statementRowBody).meta({ description: 'Newest first.' }),
    nextCursor: z.string().nullable().meta({
      description:
        'Pass as `cursor` (with the same filters) for the next page; null on the last page. A filtered page may hold fewer rows than `limit`.',
    }),
  }),
);
