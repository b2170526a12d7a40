/**
 * The test environment of the service tests (int and e2e): Node's, plus a lease on the run's
 * current DynamoDB Local (./dynamo-pool.ts) for the file's lifetime, given to the file as
 * DYNAMODB_ENDPOINT (and TEST_DYNAMODB_ENDPOINT) before the test file is loaded.
 */
import { TestEnvironment } from 'jest-environment-node';

export default class ServiceTestEnvironment extends TestEnvironment {
  private leaseId: string | undefined;

  override async setup(): Promise<void> {
    await super.setup();
    const pool = process.env.TEST_DYNAMODB_POOL;
    if (!pool) return;
    const res = await fetch(`${pool}/lease`, { method: 'POST' });
    if (!res.ok) throw new Error(`DynamoDB Local pool: ${res.status} ${await res.text()}`);
    const { id, endpoint } = (await res.json()) as { id: string; endpoint: string };
    this.leaseId = id;
    // Jest runs the setup files (./env.ts) before this: both variables are set here.
    this.global.process.env.TEST_DYNAMODB_ENDPOINT = endpoint;
    this.global.process.env.DYNAMODB_ENDPOINT = endpoint;
  }

  override async teardown(): Promise<void> {
    const pool = process.env.TEST_DYNAMODB_POOL;
    if (pool && this.leaseId) await fetch(`${pool}/release/${this.leaseId}`, { method: 'POST' }).catch(() => undefined);
    await super.teardown();
  }
}
