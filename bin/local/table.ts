/**
 * Creates the service table on DynamoDB Local with the same keys, index, TTL and stream (new and
 * old images, for the webhook dispatcher: bin/local/webhook-pipeline.ts) as the CDK stack.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { INDEXES, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/table';

/** The stream the webhook dispatcher reads (lib/data-store.ts declares the same). */
const TABLE_STREAM = { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' as const };

const indexSpec = (index: (typeof INDEXES)[number]) => ({
  IndexName: index.indexName,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
});
const indexAttributes = (index: (typeof INDEXES)[number]) => [
  { AttributeName: index.partitionKey, AttributeType: 'S' as const },
  { AttributeName: index.sortKey, AttributeType: 'S' as const },
];

export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    try {
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [
            { AttributeName: TABLE_KEYS.partitionKey, AttributeType: 'S' },
            { AttributeName: TABLE_KEYS.sortKey, AttributeType: 'S' },
            ...INDEXES.flatMap(indexAttributes),
          ],
          KeySchema: [
            { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
            { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: INDEXES.map(indexSpec),
          StreamSpecification: TABLE_STREAM,
        }),
      );
      await client.send(
        new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }),
      );
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    // A table kept in .data/ from before an index was added gets it now.
    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A table kept in .data/ from before webhooks gets its stream now.
    if (!described.Table?.StreamSpecification?.StreamEnabled) {
      await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: TABLE_STREAM }));
    }
    const present = new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
    for (const index of INDEXES) {
      if (present.has(index.indexName)) continue;
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: indexAttributes(index),
          GlobalSecondaryIndexUpdates: [{ Create: indexSpec(index) }],
        }),
      );
    }
  } finally {
    client.destroy();
  }
}
