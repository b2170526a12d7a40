import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db } from './client';
import { keys } from './table';

/** One consistent GetItem of a fixed key: proves the table exists and answers. */
export async function pingTable(): Promise<void> {
  await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.health(), ConsistentRead: true }));
}
