/**
 * One tenant's endpoint that hangs must not delay another tenant's deliveries (docs/webhooks.md
 * "A failing endpoint is backed off"). Measured against the local stack, whose delivery consumer
 * has two pollers taking batches of ten (Lambda's event source mapping, scaled down): the same
 * flood of events to a noisy tenant twice, once while its endpoint answers at once and once while
 * it never answers, and beside it a healthy tenant's events; the healthy tenant's delivery lag
 * (event createdAt → its receiver) is printed for both runs and must stay within a bound.
 */
import { auditAfterAll } from '../support/audit';
import { useTestStack } from '../support/stack';
import { eventOf, type Receiver, startReceiver } from './receiver';

/** The send timeout here (a hung receiver holds a send this long). */
const TIMEOUT_MS = 2_000;
const FLOOD = 120;
const HEALTHY = 20;

const receivers: Receiver[] = [];
// The (hung) receivers stop before the stack: declared first, this runs before its stop.
afterAll(async () => {
  for (const r of receivers) await r.stop();
});
const t = useTestStack({ AUTH_CACHE_TTL_MS: '0', WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) }, { webhooks: { pollIntervalMs: 50 } });
auditAfterAll();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** An enabled agent with one endpoint for charge.succeeded at `url`, and a user to charge. */
async function tenant(url: string) {
  const agent = await t.enabledAgent();
  const created = await t.call<{ id: string }>('POST', '/api/v1/agents/webhooks', {
    headers: { 'x-agent-key': agent.key },
    body: { url, events: ['charge.succeeded'] },
  });
  expect(created.status).toBe(201);
  const user = await t.fundedUser({ USD: FLOOD + HEALTHY });
  let n = 0;
  return {
    agent,
    webhookId: created.body.id,
    async charge(): Promise<void> {
      const res = await t.call('POST', '/api/v1/agents/charges', {
        headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `noisy-${agent.id}-${++n}` },
        raw: '{"amount":1,"currency":"USD"}',
      });
      expect(res.status).toBe(201);
    },
  };
}

/** The noisy tenant's flood (paced, ~12/s) and, meanwhile, the healthy tenant's events; the healthy lags in ms. */
async function run(noisy: Awaited<ReturnType<typeof tenant>>, healthy: Awaited<ReturnType<typeof tenant>>, healthyReceiver: Receiver) {
  const before = healthyReceiver.received.length;
  const flood = (async () => {
    for (let i = 0; i < FLOOD; i++) {
      await noisy.charge();
      await sleep(50);
    }
  })();
  await sleep(300);
  for (let i = 0; i < HEALTHY; i++) {
    await healthy.charge();
    await sleep(500);
  }
  await flood;
  await healthyReceiver.waitFor(() => healthyReceiver.received.length >= before + HEALTHY, 30_000);
  return healthyReceiver.received.slice(before).map((r) => r.at - Date.parse(eventOf(r).createdAt));
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};
const summary = (lags: number[]) => `p50 ${percentile(lags, 50)} ms, p90 ${percentile(lags, 90)} ms, max ${Math.max(...lags)} ms`;

it("keeps a healthy tenant's delivery lag within a bound while another tenant's endpoint hangs (backed off, not retried on the shared worker)", async () => {
  const healthyReceiver = await receiver();
  const healthy = await tenant(healthyReceiver.url);

  // 1. The noisy tenant's endpoint answers at once.
  const fast = await receiver();
  const quiet = await run(await tenant(fast.url), healthy, healthyReceiver);

  // 2. The same flood, to an endpoint that never answers (each send runs into the timeout).
  const hung = await receiver();
  hung.delayMs = 60_000;
  const noisy = await tenant(hung.url);
  const loud = await run(noisy, healthy, healthyReceiver);

  const sends = hung.received.length;
  console.log(
    [
      `healthy tenant's delivery lag, ${HEALTHY} events beside ${FLOOD} of another tenant's (send timeout ${TIMEOUT_MS} ms):`,
      `  neighbour's endpoint answers at once: ${summary(quiet)}   [${quiet.join(', ')}]`,
      `  neighbour's endpoint hangs:           ${summary(loud)}   [${loud.join(', ')}]`,
      `  POSTs the hung endpoint received: ${sends} for ${FLOOD} events`,
    ].join('\n'),
  );
  // Only the opening costs: sends already in flight when the endpoint starts failing hold their
  // poller until they time out, and with two pollers the streak reaches 5 after one or two rounds
  // of timeouts (so up to 2 send timeouts of lag for the events queued meanwhile); once it has, the
  // endpoint's deliveries are held, not sent. A worker that retried the hung endpoint instead would
  // put ~FLOOD/2 send timeouts (two minutes here) in front of the healthy tenant's later events, so
  // bounds of a few timeouts separate the two by an order of magnitude and leave a loaded CI
  // machine its noise (fresh-clone runs missed tighter bounds: p50 by 16 ms, p90 by 450 ms).
  expect(percentile(loud, 50)).toBeLessThanOrEqual(percentile(quiet, 50) + TIMEOUT_MS + 1_000);
  expect(percentile(loud, 90)).toBeLessThanOrEqual(percentile(quiet, 90) + 2 * TIMEOUT_MS + 1_500);
  expect(Math.max(...loud)).toBeLessThanOrEqual(Math.max(...quiet) + 3 * TIMEOUT_MS + 2_000);
  // The healthy tenant's last events, sent well after the streak was reached, are not held at all.
  const settled = loud.slice(-HEALTHY / 2);
  expect(percentile(settled, 50)).toBeLessThanOrEqual(Math.max(...quiet) + 1_000);
  // The hung endpoint was backed off: most of the flood never reached it.
  expect(sends).toBeLessThan(FLOOD / 2);
}, 120_000);
