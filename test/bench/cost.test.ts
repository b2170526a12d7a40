import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHARGE_ENDPOINT,
  CONSOLE_OVERVIEW_ENDPOINT,
  costPerMillionCharges,
  costSummaryLines,
  POLICY_CHARGE_CASE,
  PRICES,
  X402_SETTLE_CASE,
  X402_SETTLE_ENDPOINT,
} from './cost';
import type { LatencyRow } from './latency';
import { type BenchReport, renderMarkdown } from './report';
import type { RequestCount } from './requests';

const warmCharge: RequestCount = {
  endpoint: CHARGE_ENDPOINT,
  case: 'created (201)',
  state: 'warm',
  status: 201,
  dynamo: { TransactWriteItems: 1 },
  reads: 0,
  writes: 1,
  sqs: 0,
  itemsRead: 0,
  readUnits: 0,
  writeUnits: 12,
  processWide: 1,
};
const policyCharge: RequestCount = { ...warmCharge, case: POLICY_CHARGE_CASE };
const chargeLatency: LatencyRow = { endpoint: CHARGE_ENDPOINT, samples: 200, p50Ms: 1.96, p95Ms: 5.64, p99Ms: 8.59, meanMs: 2.7 };

describe('cost per million charges', () => {
  it('adds API Gateway, Lambda requests, Lambda GB-seconds and DynamoDB request units', () => {
    const cost = costPerMillionCharges({ handlerMs: 2.7, memoryMb: 512, readUnits: 2, writeUnits: 12 });
    expect(cost.billedMs).toBe(3);
    expect(cost.apiGateway).toBe(1);
    expect(cost.lambdaRequests).toBe(0.2);
    // 10⁶ × 0.5 GB × 0.003 s = 1500 GB-s.
    expect(cost.lambdaDuration).toBeCloseTo(1500 * 0.0000133334, 10);
    expect(cost.dynamoWrites).toBeCloseTo(12 * 0.625, 10);
    expect(cost.dynamoReads).toBeCloseTo(2 * 0.125, 10);
    expect(cost.total).toBeCloseTo(1 + 0.2 + 0.0200001 + 7.5 + 0.25, 6);
  });

  it('bills duration in whole milliseconds, rounded up', () => {
    expect(costPerMillionCharges({ handlerMs: 3, memoryMb: 1024, readUnits: 0, writeUnits: 0 }).billedMs).toBe(3);
    expect(costPerMillionCharges({ handlerMs: 3.01, memoryMb: 1024, readUnits: 0, writeUnits: 0 }).lambdaDuration).toBeCloseTo(
      1e6 * 0.004 * PRICES.lambdaArmPerGbSecond,
      10,
    );
  });

  it('uses the us-east-1 prices in effect since November 2024', () => {
    expect(PRICES).toMatchObject({
      region: 'us-east-1',
      apiGatewayHttpPerMillionRequests: 1,
      lambdaArmPerMillionRequests: 0.2,
      lambdaArmPerGbSecond: 0.0000133334,
      dynamoPerMillionWriteRequestUnits: 0.625,
      dynamoPerMillionReadRequestUnits: 0.125,
    });
  });

  it('ends a run with the warm charge, the policy charge and the cost', () => {
    expect(costSummaryLines({ requests: [warmCharge, policyCharge], latency: [chargeLatency] })).toEqual([
      'bench: warm charge requests 1 reads 0 wcu 12',
      'bench: policy charge requests 1 reads 0 wcu 12',
      'bench: grant charge requests not measured in this run',
      'bench: x402 settle requests not measured in this run',
      'bench: x402 purchase requests not measured in this run',
      'bench: console overview requests not measured in this run',
      'bench: statement page requests not measured in this run',
      'bench: cost per million charges $8.72',
    ]);
  });

  it('prints the warm x402 settle with its requests, reads and write units', () => {
    const settle: RequestCount = {
      ...warmCharge,
      endpoint: X402_SETTLE_ENDPOINT,
      case: X402_SETTLE_CASE,
      status: 200,
      dynamo: { GetItem: 1, PutItem: 1, TransactWriteItems: 1 },
      reads: 1,
      writeUnits: 9.5,
    };
    expect(costSummaryLines({ requests: [warmCharge, settle, { ...settle, state: 'cold' }], latency: [] })).toContain(
      'bench: x402 settle requests 3 reads 1 wcu 9.5',
    );
  });

  it("prints the console Overview's most requests, cold or warm, counting every command", () => {
    const overview: RequestCount = {
      ...warmCharge,
      endpoint: CONSOLE_OVERVIEW_ENDPOINT,
      case: 'signed in',
      status: 200,
      dynamo: { GetItem: 2, Query: 1 },
      reads: 3,
      writes: 0,
      writeUnits: 0,
    };
    const cold: RequestCount = { ...overview, state: 'cold', dynamo: { GetItem: 2, Query: 1, UpdateItem: 1 }, writes: 1 };
    expect(costSummaryLines({ requests: [overview, cold], latency: [] })).toContain('bench: console overview requests 4');
  });

  it('says what a run did not measure instead of inventing it', () => {
    expect(costSummaryLines({ requests: [warmCharge], latency: [] })).toEqual([
      'bench: warm charge requests 1 reads 0 wcu 12',
      'bench: policy charge requests not measured in this run',
      'bench: grant charge requests not measured in this run',
      'bench: x402 settle requests not measured in this run',
      'bench: x402 purchase requests not measured in this run',
      'bench: console overview requests not measured in this run',
      'bench: statement page requests not measured in this run',
      'bench: cost per million charges not measured in this run',
    ]);
    expect(costSummaryLines({ requests: [{ ...warmCharge, state: 'cold' }], latency: [chargeLatency] })).toEqual([
      'bench: warm charge requests not measured in this run',
      'bench: policy charge requests not measured in this run',
      'bench: grant charge requests not measured in this run',
      'bench: x402 settle requests not measured in this run',
      'bench: x402 purchase requests not measured in this run',
      'bench: console overview requests not measured in this run',
      'bench: statement page requests not measured in this run',
      'bench: cost per million charges not measured in this run',
    ]);
  });
});

describe('the cost section of benchmarks.md', () => {
  const committed = JSON.parse(readFileSync(join(__dirname, '../../docs/benchmarks.json'), 'utf8')) as BenchReport;

  it('shows the prices, the formula and the total', () => {
    const md = renderMarkdown({ ...committed, requests: [warmCharge], latency: [chargeLatency] });
    expect(md).toContain('## Cost per million charges at AWS list prices');
    expect(md).toContain('https://aws.amazon.com/dynamodb/pricing/on-demand/');
    expect(md).toContain('+ WRU × 0.625 + RRU × 0.125');
    expect(md).toContain('| **total** |  | **$8.72** |');
  });

  it('renders a missing figure as not measured', () => {
    const md = renderMarkdown({ ...committed, requests: [warmCharge], latency: [] });
    expect(md).toContain('| Lambda duration | not measured in this run | not measured in this run |');
    expect(md).toContain('| **total** |  | not measured in this run |');
  });
});
