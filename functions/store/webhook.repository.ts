/**
 * Webhook endpoints. An owner's endpoints live in one partition (`WEBHOOKS#<owner>`, at most 10
 * items), so listing them and fanning an event out are one strongly consistent Query. A counter
 * item carries the limit: create increments it under the condition `count < 10` in the same
 * transaction as the Put, delete decrements it with the Delete, so two concurrent creates can
 * never make an eleventh.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { DomainError } from '../core/errors';
import { MAX_WEBHOOKS_PER_OWNER, type Webhook } from '../core/webhooks';
import { db } from './client';
import { keys } from './table';
import { ConditionFailedError, transactWrite } from './transact';

/** The owner already has MAX_WEBHOOKS_PER_OWNER endpoints. */
export class WebhookLimitError extends DomainError {
  constructor() {
    super('webhook limit reached');
    this.name = 'WebhookLimitError';
  }
}

export interface StoredWebhook extends Webhook {
  /** The signing secret, sealed (store/webhook-secret.ts). */
  sealedSecret: string;
}

/** Creates an endpoint if the owner has fewer than the limit. Throws WebhookLimitError. */
export async function createWebhook(webhook: StoredWebhook): Promise<void> {
  const table = config().TABLE_NAME;
  try {
    await transactWrite([
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
      {
        Put: {
          TableName: table,
          Item: { ...keys.webhook(webhook.owner, webhook.id), type: 'Webhook', ...webhook },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    ]);
  } catch (error) {
    if (error instanceof ConditionFailedError && error.failed.includes(0)) throw new WebhookLimitError();
    throw error;
  }
}

/** Deletes one of the owner's endpoints; false when it has none with this id. */
export async function deleteWebhook(owner: string, webhookId: string): Promise<boolean> {
  const table = config().TABLE_NAME;
  try {
    await transactWrite([
      { Delete: { TableName: table, Key: keys.webhook(owner, webhookId), ConditionExpression: 'attribute_exists(PK)' } },
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
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError && error.failed.includes(0)) return false;
    throw error;
  }
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
  };
}
