import { ensureTable } from '../../bin/local/table';
import { config } from '../../functions/config';

/** Creates this test file's table (see test/support/env.ts). */
export async function createTestTable(): Promise<void> {
  await ensureTable(config().DYNAMODB_ENDPOINT ?? '', config().TABLE_NAME);
}
