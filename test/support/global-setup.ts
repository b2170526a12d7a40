import { startDynamoDbLocal } from '../../bin/local/dynamodb-local';

/** One in-memory DynamoDB Local for the whole run; its endpoint reaches every worker via env. */
export default async function globalSetup(): Promise<void> {
  // Node 20 is what this machine runs; Lambda runs Node 22+. The SDK's notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dynamo = await startDynamoDbLocal({ inMemory: true });
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  (globalThis as { __dynamo?: { stop(): Promise<void> } }).__dynamo = dynamo;
}
