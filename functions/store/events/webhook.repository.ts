/**
 * Webhook endpoints. An owner's endpoints live in one partition (`WEBHOOKS#<owner>`, at most 10
 * items), so listing them and fanning an event out are one strongly consistent Query. A counter
 * item carries the limit: create increments it under the condition `count < 10` in the same
 * transaction as the Put, delete decrements it with the Delete, so two concurrent creates can
 * never make an eleventh.
 */
import { GetCommand, QueryCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import { DomainError, UserKeyRevokedError } from '../../core/errors';
import {
  ENDPOINT_FAILURES_BEFORE_BACKOFF,
  type EndpointHealth,
  endpointBackoffSeconds,
  MAX_WEBHOOKS_PER_OWNER,
  type Webhook,
} from '../../core/webhooks';
import { db } from '../client';
import { agentEnabledCheck } from '../identity/agent.repository';
import { accountKeyCheck } from '../identity/user.repository';
import { keys } from '../table';
import { conditionalWrite, named, outcome, PRECEDENCE, type TransactEntry, transactWrite } from '../transact';

/** The owner already has MAX_WEBHOOKS_PER_OWNER endpoints. */
export class WebhookLimitError extends DomainError {
  constructor() {
    super('webhook limit reached');
    this.name = 'WebhookLimitError';
  }
}

export interface StoredWebhook extends Webhook {
  /** The signing secret, sealed (store/events/webhook-secret.ts). */
  sealedSecret: string;
  /** The delivery worker's circuit breaker for this endpoint (core/webhooks.ts). */
  health: EndpointHealth;
}

/**
 * The key an endpoint is registered with: a payer's account key, or the agent's key. The create is
 * conditioned on it, never on an auth cache that may be 30 s behind a rotation or a disable.
 */
export type WebhookWriter = { userId: string; accountKeyHash: string } | { agentKeyHash: string };

/**
 * Creates an endpoint if the owner has fewer than the limit. Throws WebhookLimitError. The create
 * is conditioned on the key it is made with (`writer`): a payer's account key still being theirs
 * (UserKeyRevokedError once rotated away), so nothing the old key registers outlives a rotation;
 * an agent's key still naming an enabled agent item (AgentDisabledError when the agent is disabled
 * or the key rotated away, which moves the item), as a withdrawal's kill switch.
 */
export async function createWebhook(
  webhook: Omit<StoredWebhook, 'health'>,
  writer?: WebhookWriter,
  also: readonly TransactEntry[] = [],
): Promise<void> {
  const table = config().TABLE_NAME;
  await transactWrite([
    ...(writer ? [writerCheck(writer)] : []),
    named(
      {
        Update: {
          TableName: table,
          Key: keys.webhookCount(webhook.owner),
          UpdateExpression: 'SET #count = if_not_exists(#count, :zero) + :one, #type = :type',
          // The limit, enforced by the item every create and delete of this owner goes through.
          ConditionExpression: 'attribute_not_exists(#count) OR #count < :max',
          ExpressionAttributeNames: { '#count': 'count', '#type': 'type' },
          ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': MAX_WEBHOOKS_PER_OWNER, ':type': 'WebhookCount' },
        },
      },
      { onConditionFailed: () => new WebhookLimitError() },
    ),
    {
      Put: {
        TableName: table,
        Item: { ...keys.webhook(webhook.owner, webhook.id), type: 'Webhook', ...webhook },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    // What joins the create (its idempotency record, the API's or the console's: a retry registers one endpoint).
    ...also,
  ]);
}

/** The key the endpoint is made with, still standing; it outranks a replay (the stored answer holds the signing secret). */
function writerCheck(writer: WebhookWriter): TransactEntry {
  if ('agentKeyHash' in writer) {
    const check = agentEnabledCheck(writer.agentKeyHash);
    return { ...check, precedence: PRECEDENCE.credential };
  }
  return named(accountKeyCheck(writer.userId, writer.accountKeyHash), {
    onConditionFailed: () => new UserKeyRevokedError(),
    precedence: PRECEDENCE.credential,
  });
}

/** Deletes one of the owner's endpoints; false when it has none with this id. */
export async function deleteWebhook(owner: string, webhookId: string): Promise<boolean> {
  const table = config().TABLE_NAME;
  const result = await transactWrite([
    named(
      { Delete: { TableName: table, Key: keys.webhook(owner, webhookId), ConditionExpression: 'attribute_exists(PK)' } },
      { onConditionFailed: () => outcome('no such endpoint') },
    ),
    {
      Update: {
        TableName: table,
        Key: keys.webhookCount(owner),
        UpdateExpression: 'SET #count = #count - :one',
        // Never below zero, even if the counter were somehow behind.
        ConditionExpression: '#count > :zero',
        ExpressionAttributeNames: { '#count': 'count' },
        ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
      },
    },
  ]);
  return result.committed;
}

/** The owner's endpoints, oldest first (one strongly consistent Query of at most 10 items). */
export async function listWebhooks(owner: string): Promise<StoredWebhook[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: config().TABLE_NAME,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': keys.webhookPartition(owner) },
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []).map(toWebhook);
}

/** One of the owner's endpoints, or undefined (unknown id, another owner's, deleted). */
export async function getWebhook(owner: string, webhookId: string): Promise<StoredWebhook | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: config().TABLE_NAME, Key: keys.webhook(owner, webhookId), ConsistentRead: true }),
  );
  return out.Item ? toWebhook(out.Item) : undefined;
}

function toWebhook(item: Record<string, unknown>): StoredWebhook {
  return {
    id: String(item.id),
    owner: String(item.owner),
    url: String(item.url),
    events: Array.isArray(item.events) ? item.events.map(String) : [],
    createdAt: String(item.createdAt),
    sealedSecret: String(item.sealedSecret),
    health: {
      failureStreak: typeof item.failureStreak === 'number' ? item.failureStreak : 0,
      ...(typeof item.backoffUntil === 'number' ? { backoffUntil: item.backoffUntil } : {}),
      failedProbes: typeof item.failedProbes === 'number' ? item.failedProbes : 0,
    },
  };
}

/*
 * The endpoint's circuit breaker (core/webhooks.ts), kept on its item. Every write is conditioned
 * on the item existing (an UpdateItem would otherwise re-create a deleted endpoint as a stub) and
 * a failed condition is simply nothing to do. A breaker is a heuristic: racing updates may leave
 * the streak off by a few, never a delivery lost.
 */

/** Sends that run into a failed condition here were about a deleted endpoint, or lost a race that needs no retry. */
async function updateEndpoint(update: UpdateCommandInput): Promise<Record<string, unknown> | undefined> {
  const result = await conditionalWrite({ Update: update }, () => outcome('nothing to do'));
  return result.committed ? (result.attributes ?? {}) : undefined;
}

/**
 * The back-off is over: claims the probe for this worker by pushing `backoffUntil` to `probeUntil`,
 * provided nobody moved it since it was read (`seen`). True when this worker sends the probe.
 */
export async function claimProbe(owner: string, webhookId: string, seen: number, probeUntil: number): Promise<boolean> {
  const out = await updateEndpoint({
    TableName: config().TABLE_NAME,
    Key: keys.webhook(owner, webhookId),
    UpdateExpression: 'SET #until = :probeUntil',
    ConditionExpression: 'attribute_exists(PK) AND #until = :seen',
    ExpressionAttributeNames: { '#until': 'backoffUntil' },
    ExpressionAttributeValues: { ':probeUntil': probeUntil, ':seen': seen },
    ReturnValues: 'UPDATED_NEW',
  });
  return out !== undefined;
}

/** A send succeeded: the breaker closes (called only when it was not already closed, so a healthy endpoint costs no write). */
export async function recordEndpointSuccess(owner: string, webhookId: string): Promise<void> {
  await updateEndpoint({
    TableName: config().TABLE_NAME,
    Key: keys.webhook(owner, webhookId),
    UpdateExpression: 'SET #streak = :zero REMOVE #until, #probes',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeNames: { '#streak': 'failureStreak', '#until': 'backoffUntil', '#probes': 'failedProbes' },
    ExpressionAttributeValues: { ':zero': 0 },
  });
}

/**
 * A send failed. A failed probe backs the endpoint off again, twice as long (`failedProbes` was
 * read with the endpoint; one probe runs at a time). Any other failure adds to the streak, and the
 * one that makes it ENDPOINT_FAILURES_BEFORE_BACKOFF opens the breaker (only if nobody has).
 */
export async function recordEndpointFailure(
  owner: string,
  webhookId: string,
  at: { now: Date; probe: boolean; failedProbes: number },
): Promise<void> {
  const key = keys.webhook(owner, webhookId);
  const names = { '#streak': 'failureStreak', '#until': 'backoffUntil', '#probes': 'failedProbes' };
  if (at.probe) {
    const failedProbes = at.failedProbes + 1;
    await updateEndpoint({
      TableName: config().TABLE_NAME,
      Key: key,
      UpdateExpression: 'SET #streak = if_not_exists(#streak, :zero) + :one, #probes = :probes, #until = :until',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: {
        ':zero': 0,
        ':one': 1,
        ':probes': failedProbes,
        ':until': at.now.getTime() + endpointBackoffSeconds(failedProbes) * 1000,
      },
    });
    return;
  }
  const out = await updateEndpoint({
    TableName: config().TABLE_NAME,
    Key: key,
    UpdateExpression: 'SET #streak = if_not_exists(#streak, :zero) + :one',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeNames: { '#streak': 'failureStreak' },
    ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    ReturnValues: 'UPDATED_NEW',
  });
  if (Number(out?.failureStreak ?? 0) < ENDPOINT_FAILURES_BEFORE_BACKOFF) return;
  await updateEndpoint({
    TableName: config().TABLE_NAME,
    Key: key,
    UpdateExpression: 'SET #until = :until, #probes = :zero',
    // Opened once: later failures of sends already in flight leave the back-off as it is.
    ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#until)',
    ExpressionAttributeNames: { '#until': 'backoffUntil', '#probes': 'failedProbes' },
    ExpressionAttributeValues: { ':zero': 0, ':until': at.now.getTime() + endpointBackoffSeconds(0) * 1000 },
  });
}
