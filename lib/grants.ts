/**
 * Least-privilege grants, spelled out. CDK's grant helpers (grantReadData, grantSendMessages,
 * grantRead) add actions the code never calls (Scan, DescribeTable, GetQueueUrl,
 * DescribeSecret, …); these add only what the repositories and clients actually send.
 */

import { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { TableAccess } from '../functions/api/routes';
import { GSI1, type INDEXES } from '../functions/store/table';

/** A global secondary index of the table, by name. */
export type TableIndex = (typeof INDEXES)[number]['indexName'];

/**
 * DynamoDB actions per access level. TransactWriteItems has no action of its own: each item in
 * a transaction is authorised as its Put/Update/Delete/ConditionCheck.
 */
export const TABLE_ACTIONS: Record<TableAccess, readonly string[]> = {
  read: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
  write: ['dynamodb:ConditionCheckItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
};

/**
 * Table access. Readers may query GSI1 (agents and charges by id, the payout and pending-charge
 * queues); any other index only when named in `indexes` (GSI2, a user's charges across agents, is
 * the user history's alone). Indexes by name, never index/*: a new index is a new grant.
 */
export function grantTable(
  role: iam.IRole,
  table: dynamodb.ITable,
  access: readonly TableAccess[],
  options: { indexes?: readonly TableIndex[] } = {},
): void {
  if (access.includes('read')) {
    const indexes = [GSI1.indexName, ...(options.indexes ?? []).filter((name) => name !== GSI1.indexName)];
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...TABLE_ACTIONS.read],
        resources: [table.tableArn, ...indexes.map((name) => `${table.tableArn}/index/${name}`)],
      }),
    );
  }
  if (access.includes('write')) {
    role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...TABLE_ACTIONS.write], resources: [table.tableArn] }));
  }
}

export function grantSendToQueue(role: iam.IRole, queue: sqs.IQueue): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
}

/** What Lambda's SQS event source mapping needs on the consumer's role, and no more. */
export const QUEUE_CONSUME_ACTIONS = ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'] as const;

export function grantConsumeQueue(role: iam.IRole, queue: sqs.IQueue): void {
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: [...QUEUE_CONSUME_ACTIONS], resources: [queue.queueArn] }));
}

/**
 * functions/store/secrets.ts sends GetSecretValue only. A secret on the AWS-managed key needs
 * nothing more; one on a customer-managed key (the hot wallet) also needs kms:Decrypt on that key,
 * and only through Secrets Manager.
 */
export function grantReadSecrets(role: iam.IRole, secrets: readonly secretsmanager.ISecret[]): void {
  if (secrets.length === 0) return;
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: secrets.map((s) => s.secretArn) }),
  );
  for (const secret of secrets) {
    if (!secret.encryptionKey) continue;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [secret.encryptionKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(secret).region}.amazonaws.com` } },
      }),
    );
  }
}
