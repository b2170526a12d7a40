/**
 * The test run's DynamoDB Local pool (test/support/dynamo-pool.ts): each instance serves a fixed
 * number of files, the next takes over, and an old one stops once its last file is released.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { type DynamoPool, startDynamoPool } from '../support/dynamo-pool';

let pool: DynamoPool;
beforeAll(async () => {
  pool = await startDynamoPool({ filesPerInstance: 2 });
}, 120_000);
afterAll(async () => pool?.stop());

const lease = async () => {
  const res = await fetch(`${pool.url}/lease`, { method: 'POST' });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; endpoint: string };
};
const release = (id: string) => fetch(`${pool.url}/release/${id}`, { method: 'POST' });
const answers = async (endpoint: string) => {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    maxAttempts: 1,
  });
  try {
    await client.send(new ListTablesCommand({}));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
};

it('renews the instance after its files, and stops the old one when its last file is done', async () => {
  const [a, b] = await Promise.all([lease(), lease()]);
  expect(a.endpoint).toBe(b.endpoint);
  const c = await lease();
  expect(c.endpoint).not.toBe(a.endpoint);
  expect(await answers(c.endpoint)).toBe(true);
  // The old instance still serves the file that holds it.
  await release(a.id);
  expect(await answers(a.endpoint)).toBe(true);
  await release(b.id);
  for (let i = 0; i < 50 && (await answers(a.endpoint)); i++) await new Promise((r) => setTimeout(r, 100));
  expect(await answers(a.endpoint)).toBe(false);
  expect(pool.started()).toBeGreaterThanOrEqual(2);
  expect((await fetch(`${pool.url}/nowhere`, { method: 'POST' })).status).toBe(404);
}, 120_000);
