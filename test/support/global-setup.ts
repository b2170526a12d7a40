import { type DynamoPool, startDynamoPool } from './dynamo-pool';

/** How many test files use one DynamoDB Local before the next one takes over (./dynamo-pool.ts). */
const FILES_PER_INSTANCE = 6;

/** The run's DynamoDB Local pool; test environments find it through the environment. */
export default async function globalSetup(): Promise<void> {
  // Node 20 is what this machine runs; Lambda runs Node 24. The SDK's notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const pool = await startDynamoPool({ filesPerInstance: FILES_PER_INSTANCE });
  process.env.TEST_DYNAMODB_POOL = pool.url;
  (globalThis as { __dynamoPool?: DynamoPool }).__dynamoPool = pool;
}
