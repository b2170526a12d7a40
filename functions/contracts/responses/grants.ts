/**
 * The response bodies of grants and grant requests (docs/grants.md), registered as components
 * (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { amount, component, currency, id, timestamp } from '../response.schemas';

const grantAmount = (description: string) => amount(`${description} In the grant's currency.`);
const grantShape = {
  id: id('g', 'Grant'),
  agent: z
    .strictObject({ id: id('a', 'Agent'), name: z.string() })
    .meta({ description: 'The one agent whose charges the grant key pays.' }),
  currency,
  limits: z
    .strictObject({
      perCharge: grantAmount('The most one charge may be.').optional(),
      hourly: grantAmount('The most per UTC clock hour (SUCCESS charges and open holds).').optional(),
      daily: grantAmount('The most per UTC calendar day (SUCCESS charges and open holds).').optional(),
      monthly: grantAmount('The most per UTC calendar month.').optional(),
      total: grantAmount('A lifetime budget.').optional(),
    })
    .meta({ description: 'Only the limits given; an absent limit is no limit.' }),
  approvalAbove: grantAmount("A charge above it waits for the payer's approval.").optional(),
  scope: z
    .strictObject({
      payees: z.array(z.string()).optional().meta({ description: "Solana addresses a purchase's payTo must be one of." }),
      hosts: z
        .array(z.string())
        .optional()
        .meta({ description: "Hosts a purchase's resource.url must be on (normalised; `*.example.com`: any sub-domain, not the apex)." }),
    })
    .optional()
    .meta({ description: 'Where the agent may pay; absent: anywhere. A scoped grant pays purchases only (docs/grants.md "Scope").' }),
  description: z.string(),
  expiresAt: timestamp.nullable().meta({ description: 'When the grant ends; null: when revoked.' }),
  status: z.enum(['active', 'revoked', 'expired']).meta({ description: 'Computed now: revoked wins over expired.' }),
  spent: grantAmount('SUCCESS charges and open holds made under the grant.'),
  createdAt: timestamp,
  revokedAt: timestamp.nullable(),
};
export const grantBody = component('Grant', z.strictObject(grantShape));
export const createdGrantBody = component(
  'CreatedGrant',
  z.strictObject({
    ...grantShape,
    key: z
      .string()
      .regex(/^ug_live_/)
      .meta({ description: 'The grant key (`ug_live_…`), shown this once: the agent sends it as x-user-key on its charges.' }),
  }),
);
export const grantListBody = component(
  'GrantList',
  z.strictObject({
    data: z.array(grantBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);
export const grantRequestBody = component(
  'GrantRequest',
  z.strictObject({
    id: z
      .string()
      .regex(/^gr[0-9a-z]{26}$/)
      .meta({ description: 'Grant request id: "gr" + a lower-case ULID.', examples: ['gr01jhx3k6v1f8q2n7c9m4p5r6s7'] }),
    status: z.enum(['pending', 'approved', 'claimed', 'denied', 'expired']).meta({
      description:
        'approved: the payer allowed; the next read takes the key and makes it claimed. expired: not answered within 15 minutes.',
    }),
    consentUrl: z.string().meta({ description: 'The page the payer allows or denies at. Give it to the payer only.' }),
    expiresAt: timestamp.meta({ description: 'The request lives 15 minutes.' }),
    grant: z
      .strictObject({
        ...grantShape,
        key: z
          .string()
          .regex(/^ug_live_/)
          .optional()
          .meta({ description: 'Only on the first read after approval: the grant key, once.' }),
      })
      .nullable()
      .meta({ description: 'The grant once the payer allowed it; else null.' }),
  }),
);
