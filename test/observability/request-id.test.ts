/**
 * Log lines carry the request id: Powertools' injectLambdaContext (functions/observability/logger.ts)
 * adds the Lambda request id to every line of an invocation, HTTP routes add API Gateway's as
 * correlation_id, and neither outlives the invocation. Every answer carries that id as x-request-id.
 */
import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { resetForTests } from '../../functions/config';
import { httpHandler } from '../../functions/http/handler';
import { refuse } from '../../functions/messages/refusal';
import { logger } from '../../functions/observability/logger';
import { INIT_ENV } from '../support/init-env';

const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
  resetForTests();
});

/** JSON log lines written (stdout and stderr) while `fn` runs, at LOG_LEVEL=INFO. */
async function logLines(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  process.env.LOG_LEVEL = 'INFO';
  resetForTests();
  const lines: string[] = [];
  const capture = (chunk: unknown) => {
    lines.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await fn();
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

function lambdaContext(awsRequestId: string, functionName: string): Context {
  return {
    awsRequestId,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    getRemainingTimeInMillis: () => 10_000,
  } as Context;
}

const event = (requestId: string) =>
  ({ rawPath: '/x', headers: {}, requestContext: { http: { method: 'GET' }, requestId } }) as unknown as APIGatewayProxyEventV2;

describe('request ids in log lines', () => {
  const route = httpHandler(async () => {
    logger().info('inside the route');
    return { statusCode: 200, body: {} };
  });
  const refusing = httpHandler(async () => {
    throw refuse('notFound');
  });
  const failing = httpHandler(async () => {
    throw new Error('boom', { cause: new Error('root cause') });
  });

  it('a route invoked with a Lambda context logs its Lambda request id and the API Gateway request id', async () => {
    const lines = await logLines(() => route(event('apigw-1'), lambdaContext('lambda-1', 'create-charge')));
    expect(lines.find((l) => l.message === 'inside the route')).toMatchObject({
      function_request_id: 'lambda-1',
      function_name: 'create-charge',
      correlation_id: 'apigw-1',
      stage: 'local',
    });
  });

  it('the error mapper logs with the request ids and the whole cause chain', async () => {
    const lines = await logLines(() => failing(event('apigw-2'), lambdaContext('lambda-2', 'create-charge')));
    expect(lines.find((l) => l.message === 'unhandled error')).toMatchObject({
      function_request_id: 'lambda-2',
      correlation_id: 'apigw-2',
      error: { name: 'Error', message: 'boom', cause: { message: 'root cause' } },
    });
  });

  it('every answer carries x-request-id: API Gateway’s id, the one its error log line carries', async () => {
    let answer: Awaited<ReturnType<typeof failing>> | undefined;
    const lines = await logLines(async () => {
      answer = await failing(event('apigw-5'), lambdaContext('lambda-5', 'create-charge'));
    });
    expect(answer?.statusCode).toBe(500);
    expect(answer?.headers?.['x-request-id']).toBe('apigw-5');
    expect(lines.find((l) => l.message === 'unhandled error')?.correlation_id).toBe('apigw-5');
    expect((await route(event('apigw-6'))).headers?.['x-request-id']).toBe('apigw-6');
    const refused = await refusing(event('apigw-7'));
    expect(refused).toMatchObject({ statusCode: 404, headers: { 'x-request-id': 'apigw-7' }, body: '{"error":"not found"}' });
  });

  it('an event without a gateway request id gets a fresh one, in the answer and in the error log line', async () => {
    const bare = { rawPath: '/x', headers: {}, requestContext: { http: { method: 'GET' } } } as unknown as APIGatewayProxyEventV2;
    const once = async () => {
      let answer: Awaited<ReturnType<typeof failing>> | undefined;
      const lines = await logLines(async () => {
        answer = await failing(bare);
      });
      const id = answer?.headers?.['x-request-id'];
      expect(lines.find((l) => l.message === 'unhandled error')?.correlation_id).toBe(id);
      return id;
    };
    const [first, second] = [await once(), await once()];
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(second).not.toBe(first);
  });

  it('does not carry one invocation’s ids into the next', async () => {
    const lines = await logLines(async () => {
      await route(event('apigw-3'), lambdaContext('lambda-3', 'create-charge'));
      logger().info('between invocations');
    });
    const between = lines.find((l) => l.message === 'between invocations');
    expect(between).toBeDefined();
    expect(between?.correlation_id).toBeUndefined();
  });

  it('the payout worker logs its Lambda request id', async () => {
    Object.assign(process.env, INIT_ENV);
    resetForTests();
    const { handler } = require('../../functions/payout-worker/handler') as {
      handler: (event: SQSEvent, context?: Context) => Promise<unknown>;
    };
    const poison = { Records: [{ messageId: 'm-1', body: 'not a payout', attributes: { ApproximateReceiveCount: '1' } }] };
    const lines = await logLines(() => handler(poison as unknown as SQSEvent, lambdaContext('lambda-4', 'payout-worker')));
    expect(lines.find((l) => String(l.message).startsWith('payout message is not'))).toMatchObject({
      function_request_id: 'lambda-4',
      function_name: 'payout-worker',
      messageId: 'm-1',
    });
  });
});
