/**
 * The response bodies of the accounts: agents (registration, the operator's view, key rotation) and
 * payers (creation, `me` with its spending policy, account-key rotation and what it ended),
 * registered as components (contracts/response.schemas.ts has the registry and the atoms).
 */
import * as z from 'zod';
import { amount, balancesBody, component, id, timestamp } from '../response.schemas';
import { userChargeBody } from './charges';
import { grantBody } from './grants';
import { webhookBody } from './webhooks';

export const agentBalanceBody = component(
  'AgentBalance',
  z.strictObject({ balances: balancesBody }).meta({ description: 'What the agent has earned and may withdraw.' }),
);

export const registeredAgentBody = component(
  'RegisteredAgent',
  z.strictObject({
    message: z.string(),
    apiKey: z
      .string()
      .regex(/^ag_live_[1-9A-HJ-NP-Za-km-z]+$/)
      .meta({ description: 'The agent key (`x-agent-key`). Shown once; stored only as its SHA-256.' }),
    enabled: z.literal(false).meta({ description: 'An agent starts disabled until an operator verifies it.' }),
    agentId: id('a', 'Agent'),
  }),
);

export const agentBody = component(
  'Agent',
  z.strictObject({
    id: id('a', 'Agent'),
    name: z.string(),
    email: z.string(),
    website: z.string(),
    enabled: z.boolean(),
    createdAt: timestamp,
  }),
);

export const agentListBody = component(
  'AgentList',
  z.strictObject({
    data: z.array(agentBody),
    nextCursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  }),
);

export const adminAgentBody = component(
  'AdminAgent',
  agentBody.extend({ balances: balancesBody }).meta({ description: 'An agent as the operator sees it: with what it may withdraw.' }),
);

export const rotatedAgentKeyBody = component(
  'RotatedAgentKey',
  z.strictObject({
    apiKey: z.string().meta({ description: 'The new agent key, shown once. The old key stops moving money at once.' }),
    agentId: id('a', 'Agent'),
    enabled: z.boolean().meta({ description: 'Carried over from before the rotation.' }),
  }),
);

const limits = z
  .strictObject({ USD: amount('A limit in USD.').optional(), USDC: amount('A limit in USDC.').optional() })
  .meta({ description: 'Per currency; an absent currency has no limit.' });
const rules = {
  perCharge: limits.optional(),
  daily: limits.optional().meta({ description: 'The UTC day: SUCCESS charges and PENDING holds.' }),
  monthly: limits.optional().meta({ description: 'The UTC calendar month.' }),
  approvalAbove: limits.optional().meta({ description: 'Charges above this wait for the user (202 PENDING).' }),
};
export const policyBody = component(
  'SpendingPolicy',
  z.strictObject({
    ...rules,
    approvalWindowSeconds: z.number().int().min(60).max(604800).optional(),
    agents: z.record(z.string(), z.strictObject({ ...rules, blocked: z.boolean().optional() })).optional(),
  }),
);

export const createdUserBody = component(
  'CreatedUser',
  z.strictObject({
    id: id('u', 'User'),
    userKey: z
      .string()
      .regex(/^uk_live_[1-9A-HJ-NP-Za-km-z]+$/)
      .meta({ description: 'The user key (`x-user-key`). Shown once; stored only as its SHA-256.' }),
  }),
);

export const userBody = component('User', z.strictObject({ id: id('u', 'User'), balances: balancesBody }));
export const meBody = component(
  'Me',
  z.strictObject({
    id: id('u', 'User'),
    balances: balancesBody,
    held: balancesBody,
    // What PayPal took back beyond the balance (docs/topups.md, reversals); see the operation.
    owed: balancesBody,
    policy: policyBody,
  }),
);

/** A rotation of the account key ends what the old key made (docs/grants.md "Rotating the account key"). */
export const rotatedUserKeyBody = component(
  'RotatedUserKey',
  z.strictObject({
    userKey: z.string().meta({ description: 'Shown once.' }),
    revokedGrants: z.array(grantBody).meta({
      description:
        'Every grant that was active, now revoked: whoever held the old key may have made them. Make again those that were yours.',
    }),
    deletedWebhooks: z.array(webhookBody).meta({
      description: 'Every user webhook endpoint, now deleted, for the same reason. Register again those that were yours.',
    }),
    releasedCharges: z.array(userChargeBody).meta({
      description:
        'Every charge made with the account key that was open (awaiting approval or capture), now FAILED `account key rotated` with its hold back: ' +
        'its agent was given the approval link, or may capture it. Charges made with a grant key end with their revoked grant.',
    }),
    endedSessions: z.number().int().min(0).meta({
      description:
        "How many of the payer's console sessions it ended: every one, whatever opened it (a passkey, or the account key). Sign in again with the new key or a passkey.",
    }),
    removedPasskeys: z.array(z.string()).meta({
      description:
        'The names of the passkeys it removed: every passkey added from a session the account key opened (or vouched for by one that was), since whoever held the old key could have added it. Passkeys added in a passkey session, and the one made at sign-up, stay.',
    }),
  }),
);
