import type { DynamoPool } from './dynamo-pool';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __dynamoPool?: DynamoPool }).__dynamoPool?.stop();
}
