import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { loadConfig } from '../config';
import { type AgentChangeRecord, fanOutRecords } from '../kill-switch/fanout';
import { withRequestContext } from '../observability/lambda-handler';

loadConfig();

/**
 * DynamoDB Streams (filtered to agent items) → the agent's balance shards' copy of its kill
 * switch. A failure is reported at its record, so the stream retries from there.
 */
export const handler = withRequestContext(async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const failed = await fanOutRecords(event.Records as AgentChangeRecord[]);
  return { batchItemFailures: failed === undefined ? [] : [{ itemIdentifier: failed }] };
});
