/**
 * The bench's counting code run as a test: one local stack on this file's table (the interval
 * sweeper and watcher off, so only what the test runs is counted), an HTTP client, and the ledger
 * audit after all. Call at the top of an int test; read `ctx()` inside the tests.
 */
import { auditAfterAll } from '../support/audit';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import type { BenchContext } from './context';
import { httpClient } from './http';

export function benchContextForTests(): () => BenchContext {
  let t: TestStack | undefined;
  let ctx: BenchContext | undefined;
  let close = () => {};
  beforeAll(async () => {
    await createTestTable();
    t = await startTestStack({}, { sweepIntervalMs: 0 });
    const http = httpClient(t.stack.url);
    close = http.close;
    ctx = { stack: t.stack, call: http.call, admin: t.admin, quick: true, log: () => {} };
  });
  afterAll(async () => {
    close();
    await t?.stack.stop();
  });
  auditAfterAll();
  return () => {
    if (!ctx) throw new Error('the bench context is built in beforeAll');
    return ctx;
  };
}
