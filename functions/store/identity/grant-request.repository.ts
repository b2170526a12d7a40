/**
 * Grant requests (DESIGN §16, docs/grants.md): an agent's request lives in its own partition
 * (`GRANTREQ#<agentId>`, so another agent's is simply not there); its consent link's token is
 * found by hash only (`CONSENT#<sha256>` → the request). Each move is one conditional write on the
 * request item: pending → approved (in the grant's own create transaction), pending → denied,
 * approved → claimed (once: the agent's first read after approval, with the agent item checked
 * enabled in the same transaction). Expiry is computed.
 */

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { DomainError } from '../../core/errors';
import { GRANT_LIMIT_NAMES, type GrantLimits, type GrantRequest } from '../../core/grants';
import type { IdempotencyWrite } from '../../core/idempotency';
import { isCurrency } from '../../core/money';
import { db } from '../client';
import { idempotencyPut } from '../idempotency.repository';
import { readMinor } from '../numbers';
import { keys } from '../table';
import { conditionalWrite, named, outcome, transactWrite } from '../transact';
import { agentEnabledCheck } from './agent.repository';
import { scopeOf } from './grant.mapper';
import type { ConditionedItem } from './grant.repository';

/** The request is no longer pending (decided, or past its time): the page shows what it is now. */
export class GrantRequestDecidedError extends DomainError {
  constructor() {
    super('grant request is no longer pending');
    this.name = 'GrantRequestDecidedError';
  }
}

/** Writes a new request, its consent link's lookup item and the idempotency record, in one transaction. */
export async function createGrantRequest(
  request: GrantRequest,
  tokenHash: string,
  idempotency: IdempotencyWrite,
  now: Date,
): Promise<void> {
  const table = config().TABLE_NAME;
  // A replayed request comes out as the idempotency record's IdempotencyRecordExistsError.
  await transactWrite([
    idempotencyPut(idempotency, now),
    {
      Put: {
        TableName: table,
        Item: { ...keys.grantRequest(request.agentId, request.id), ...requestItem(request) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Put: {
        TableName: table,
        Item: { ...keys.consent(tokenHash), type: 'Consent', agentId: request.agentId, requestId: request.id, ttl: ttlOf(request) },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
  ]);
}

/** Requests and their links are kept a week past their expiry (the agent may read the outcome), then TTL'd. */
const ttlOf = (request: GrantRequest) => Math.floor(Date.parse(request.expiresAt) / 1000) + 7 * 86_400;

/** The request a consent token's hash names, or undefined. */
export async function findConsent(tokenHash: string): Promise<{ agentId: string; requestId: string } | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.consent(tokenHash), ConsistentRead: true }));
  return out.Item ? { agentId: String(out.Item.agentId), requestId: String(out.Item.requestId) } : undefined;
}

/** One of the agent's requests, read strongly consistent (with the key's nonce while approved and unclaimed). */
export async function getGrantRequest(agentId: string, requestId: string): Promise<(GrantRequest & { nonce?: string }) | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.grantRequest(agentId, requestId), ConsistentRead: true }),
  );
  return out.Item ? toGrantRequest(out.Item) : undefined;
}

/**
 * The request item's move to approved, for the grant's create transaction: only while pending and
 * not expired; it records the grant, the payer and the nonce the grant key is derived from.
 */
export function approveItem(
  request: GrantRequest,
  approval: { grantId: string; userId: string; nonce: string },
  now: Date,
): ConditionedItem {
  return {
    item: {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.grantRequest(request.agentId, request.id),
        UpdateExpression: 'SET #state = :approved, grantId = :grant, userId = :user, nonce = :nonce, decidedAt = :now',
        ConditionExpression: '#state = :pending AND expiresAt > :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':approved': 'approved',
          ':pending': 'pending',
          ':grant': approval.grantId,
          ':user': approval.userId,
          ':nonce': approval.nonce,
          ':now': now.toISOString(),
        },
      },
    },
    refusal: () => new GrantRequestDecidedError(),
  };
}

/** pending → denied; GrantRequestDecidedError when it is no longer pending or has expired. */
export async function denyGrantRequest(request: GrantRequest, now: Date): Promise<void> {
  await conditionalWrite(
    {
      Update: {
        TableName: config().TABLE_NAME,
        Key: keys.grantRequest(request.agentId, request.id),
        UpdateExpression: 'SET #state = :denied, decidedAt = :now',
        ConditionExpression: '#state = :pending AND expiresAt > :now',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':denied': 'denied', ':pending': 'pending', ':now': now.toISOString() },
      },
    },
    () => new GrantRequestDecidedError(),
  );
}

/**
 * approved → claimed, exactly once: the condition lets one reader through, whoever else reads at
 * the same time; the nonce the grant key is derived from (`nonce`, as the request was read) leaves
 * the table in the same write. True for that one reader; false for every other.
 *
 * The grant key is a secret handed over once, so the claim is conditioned on the agent item of the
 * key that asked (`agentKeyHash`) still being there and enabled, as a withdrawal is: an auth cache
 * may still hold an agent the operator has since disabled, or a key rotated away (which moved the
 * item), for up to 30 s. Throws AgentDisabledError then, and the request stays `approved`.
 */
export async function claimGrantRequest(
  claim: { agentId: string; requestId: string; nonce: string; agentKeyHash: string },
  now: Date,
): Promise<boolean> {
  const result = await transactWrite<'claimed by another'>([
    named(
      {
        Update: {
          TableName: config().TABLE_NAME,
          Key: keys.grantRequest(claim.agentId, claim.requestId),
          UpdateExpression: 'SET #state = :claimed, claimedAt = :now REMOVE nonce',
          ConditionExpression: '#state = :approved AND nonce = :nonce',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':claimed': 'claimed', ':approved': 'approved', ':now': now.toISOString(), ':nonce': claim.nonce },
        },
      },
      { onConditionFailed: () => outcome('claimed by another' as const) },
    ),
    agentEnabledCheck(claim.agentKeyHash),
  ]);
  return result.committed;
}

function requestItem(request: GrantRequest): Record<string, unknown> {
  const { terms } = request;
  return {
    type: 'GrantRequest',
    requestId: request.id,
    agentId: request.agentId,
    currency: terms.currency,
    limits: terms.limits ?? {},
    ...(terms.approvalAbove !== undefined ? { approvalAbove: terms.approvalAbove } : {}),
    ...(terms.scope !== undefined ? { scope: terms.scope } : {}),
    ...(terms.ttlSeconds !== undefined ? { ttlSeconds: terms.ttlSeconds } : {}),
    description: terms.description ?? '',
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
    state: request.state,
    ttl: ttlOf(request),
  };
}

function toGrantRequest(item: Record<string, unknown>): GrantRequest & { nonce?: string } {
  const currency = item.currency;
  if (!isCurrency(currency)) throw new Error(`grant request ${String(item.requestId)}: unknown currency`);
  const rawLimits = (item.limits ?? {}) as Record<string, unknown>;
  const limits: GrantLimits = {};
  for (const name of GRANT_LIMIT_NAMES) {
    if (rawLimits[name] !== undefined) limits[name] = readMinor(rawLimits, name);
  }
  const state = String(item.state);
  return {
    id: String(item.requestId),
    agentId: String(item.agentId),
    terms: {
      currency,
      limits,
      ...(item.approvalAbove !== undefined ? { approvalAbove: readMinor(item, 'approvalAbove') } : {}),
      ...scopeOf(item),
      ...(typeof item.ttlSeconds === 'number' ? { ttlSeconds: item.ttlSeconds } : {}),
      description: String(item.description ?? ''),
    },
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    state: state === 'approved' || state === 'claimed' || state === 'denied' ? state : 'pending',
    ...(typeof item.grantId === 'string' ? { grantId: item.grantId } : {}),
    ...(typeof item.userId === 'string' ? { userId: item.userId } : {}),
    ...(typeof item.decidedAt === 'string' ? { decidedAt: item.decidedAt } : {}),
    ...(typeof item.nonce === 'string' ? { nonce: item.nonce } : {}),
  };
}
