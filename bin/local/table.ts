/** Creates the service table on DynamoDB Local with the same keys, index and TTL as the CDK stack. */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { GSI1, TABLE_KEYS, TTL_ATTRIBUTE } from '../../functions/store/table';

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
            { AttributeName: GSI1.partitionKey, AttributeType: 'S' },
            { AttributeName: GSI1.sortKey, AttributeType: 'S' },
          ],
          KeySchema: [
            { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
            { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
          ],
          GlobalSecondaryIndexes: [
            {
              IndexName: GSI1.indexName,
              KeySchema: [
                { AttributeName: GSI1.partitionKey, KeyType: 'HASH' },
                { AttributeName: GSI1.sortKey, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: 'ALL' },
            },
          ],
        }),
      );
      await client.send(
        new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }),
      );
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } finally {
    client.destroy();
  }
}
