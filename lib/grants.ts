/**
 * Least-privilege grants, spelled out. CDK's grant helpers (grantReadData, grantSendMessages,
 * grantRead) add actions the code never calls (Scan, DescribeTable, GetQueueUrl,
 * DescribeSecret, …); these add only what the repositories and clients actually send.
 */

import { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { ANSWER_SEAL_PURPOSE } from '../functions/core/idempotency';
import { grantStatements, type TableGrant } from '../functions/store/access';

/** The condition every table statement carries: the partition keys a request touches, each one of these families. */
export const LEADING_KEYS_CONDITION = 'ForAllValues:StringLike';

/**
 * Table access, by key family (functions/store/access.ts): one statement per kind of access —
 * read, condition check, put/update, delete — on the table, and one Query statement per index
 * read, each allowed only on the partition keys of the families granted (`dynamodb:LeadingKeys`:
 * for a Query of an index, the index's own partition key). DeleteItem only where the grant
 * deletes; indexes by name, never index/*. An empty grant adds nothing.
 */
export function grantTable(role: iam.IRole, table: dynamodb.ITable, grant: TableGrant): void {
  for (const statement of grantStatements(grant)) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [...statement.actions],
        resources: [statement.index ? `${table.tableArn}/index/${statement.index}` : table.tableArn],
        conditions: { [LEADING_KEYS_CONDITION]: { 'dynamodb:LeadingKeys': [...statement.leadingKeys] } },
      }),
    );
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

/** The encryption context a sealed idempotent answer's data key carries (functions/store/answer-seal.ts). */
export const SEALED_ANSWER_CONTEXT = {
  'kms:EncryptionContext:service': 'agent-payment-service',
  'kms:EncryptionContext:purpose': ANSWER_SEAL_PURPOSE,
};

/**
 * The routes that store answers holding a secret for an idempotent replay (`sealedAnswers`): a data
 * key to seal with (GenerateDataKey) and its unwrapping on a replay (Decrypt), on the stage's
 * idempotency key only, and only for that encryption context.
 */
export function grantSealedAnswers(role: iam.IRole, key: kms.IKey): void {
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
      resources: [key.keyArn],
      conditions: { StringEquals: SEALED_ANSWER_CONTEXT },
    }),
  );
}
