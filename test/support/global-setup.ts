import { startDynamoDbLocal } from '../../bin/local/dynamodb-local';

/** One in-memory DynamoDB Local for the whole run; its endpoint reaches every worker via env. */
export default async function globalSetup(): Promise<void> {
  const dynamo = await startDynamoDbLocal({ inMemory: true });
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  (globalThis as { __dynamo?: { stop(): Promise<void> } }).__dynamo = dynamo;
}
