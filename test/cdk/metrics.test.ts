/**
 * The metrics middleware in the house HTTP stack (functions/observability/metrics.ts): EMF on stdout on
 * Lambda, silence locally and in tests. Lives with the CDK tests because the alarms depend on it.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { resetForTests } from '../../functions/config';
import { httpHandler } from '../../functions/http/handler';
import { refuse } from '../../functions/messages/refusal';
import { METRICS_NAMESPACE } from '../../functions/observability/metric-names';
import { metrics } from '../../functions/observability/metrics';

const event = {
  rawPath: '/x',
  headers: {},
  requestContext: { http: { method: 'GET' }, requestId: 'r' },
} as unknown as APIGatewayProxyEventV2;

const recording = httpHandler(async () => {
  metrics().addMetric('ChargesCreated', 'Count', 1);
  return { statusCode: 201, body: {} };
});
const failing = httpHandler(async () => {
  metrics().addMetric('ChargesRefused', 'Count', 1);
  throw refuse('notFound');
});
const quiet = httpHandler(async () => ({ statusCode: 200, body: {} }));

/** Runs `fn` with the environment changed and stdout/stderr captured. */
async function capture(env: Record<string, string>, fn: () => Promise<unknown>): Promise<string[]> {
  const saved = { ...process.env };
  const lines: string[] = [];
  const out = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    Object.assign(process.env, env);
    resetForTests();
    await fn();
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.env = saved;
    resetForTests();
  }
  return lines;
}

const ON_LAMBDA = { LOCAL: '0', LOG_LEVEL: 'ERROR' };

describe('HTTP metrics middleware', () => {
  it('writes nothing in tests and locally, and forgets what was recorded', async () => {
    const lines = await capture({}, async () => {
      expect((await recording(event)).statusCode).toBe(201);
      expect((await failing(event)).statusCode).toBe(404);
    });
    expect(lines).toEqual([]);
    expect(metrics().hasStoredMetrics()).toBe(false);
  });

  it('on Lambda, writes one EMF line with the request metric after the response', async () => {
    const lines = await capture(ON_LAMBDA, async () => {
      await recording(event);
    });
    expect(lines).toHaveLength(1);
    const emf = JSON.parse(lines[0] ?? '{}');
    expect(emf).toMatchObject({ ChargesCreated: 1, service: 'agent-payment-service', stage: 'local' });
    expect(emf._aws.CloudWatchMetrics[0].Namespace).toBe(METRICS_NAMESPACE);
  });

  it('on Lambda, still flushes when the request failed', async () => {
    const lines = await capture(ON_LAMBDA, async () => {
      expect((await failing(event)).statusCode).toBe(404);
    });
    expect(lines.map((l) => JSON.parse(l).ChargesRefused)).toEqual([1]);
  });

  it('on Lambda, writes nothing at all for a request that recorded nothing', async () => {
    const lines = await capture(ON_LAMBDA, async () => {
      await quiet(event);
    });
    expect(lines).toEqual([]);
  });
});
