/**
 * The response bodies of tabs (DESIGN §29, docs/tabs.md), registered as components
 * (contracts/response.schemas.ts has the registry and the atoms). contracts/tab-views.ts makes them.
 */
import * as z from 'zod';
import { TAB_STATUSES } from '../../core/tabs';
import { amount, component, currency, id, timestamp } from '../response.schemas';

const tabId = z
  .string()
  .regex(/^t[0-9a-z]{26}a[0-9a-z]{26}$/)
  .meta({
    description: 'Tab id, opaque to clients: "t" + a lower-case ULID + the id of its agent (54 characters).',
    examples: ['t01jhx3k6v1f8q2n7c9m4p5r6s7a01jhx2z9e4w7q1m3v8b6n5k2d0'],
  });

export const tabBody = component(
  'Tab',
  z.strictObject({
    id: tabId,
    status: z.enum(TAB_STATUSES).meta({
      description:
        "PENDING_APPROVAL: its hold waits for the payer's approval (no use yet). OPEN: uses are taken until expiresAt. CLOSED: " +
        '`used` was captured as one charge of type `tab` (chargeId) and the rest released.',
    }),
    currency,
    limit: amount('The most the tab may use: held from the payer when it opened.'),
    used: amount('What its uses add up to.'),
    usageCount: z.int().min(0).meta({ description: 'How many uses it took.' }),
    grantId: id('g', 'Grant').nullable().meta({ description: 'The grant whose key opened it; null for the account key.' }),
    expiresAt: timestamp.meta({ description: 'When it stops taking uses and closes (while PENDING_APPROVAL: when the approval expires).' }),
    createdAt: timestamp,
    chargeId: z.string().meta({ description: 'The tab\'s hold: a charge of `type: "tab"`, SUCCESS for `used` once the tab closed.' }),
    closedAt: timestamp.nullable().meta({ description: 'When it closed; null while not CLOSED.' }),
    closedBy: z
      .enum(['agent', 'payer', 'expiry', 'declined', 'agent disabled', 'agent blocked'])
      .nullable()
      .meta({ description: 'Who or what closed it; null while not CLOSED.' }),
  }),
);

export const pendingTabBody = component(
  'PendingTab',
  tabBody.extend({
    approvalUrl: z
      .url()
      .nullable()
      .meta({ description: 'Where the payer approves the hold (null for a grant key: the link reaches the payer only).' }),
  }),
);

export const tabUsageBody = component(
  'TabUsage',
  z.strictObject({
    tabId,
    usageId: z
      .string()
      .regex(/^tu[0-9a-z]{26}$/)
      .meta({ description: 'This use\'s id: "tu" + a lower-case ULID.' }),
    amount: amount('What this use took.'),
    used: amount('What the tab had used once this use was taken.'),
    remaining: amount('What the tab had left once this use was taken.'),
  }),
);

export const tabUsageListBody = component(
  'TabUsageList',
  z.strictObject({
    data: z.array(tabUsageBody.extend({ description: z.string(), createdAt: timestamp })),
    nextCursor: z.string().nullable(),
  }),
);

export const userTabListBody = component(
  'UserTabList',
  z.strictObject({
    data: z.array(
      tabBody.extend({
        description: z.string(),
        agent: z.strictObject({ id: z.string(), name: z.string().nullable() }),
        held: amount("What the tab holds of the payer's balance now: its limit until it closes, then 0."),
      }),
    ),
    nextCursor: z.string().nullable(),
  }),
);
