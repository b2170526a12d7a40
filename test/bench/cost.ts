/**
 * What one million warm `POST /api/v1/agents/charges` would cost on AWS at list price, from the
 * figures a bench run measured. The prices are constants here and nowhere else, so a price change
 * is one edit; the renderer prints the table and the formula beside the result.
 */
import type { LatencyRow } from './latency';
import type { RequestCount } from './requests';

/**
 * AWS list prices, us-east-1, in USD, in effect since 1 November 2024 (the DynamoDB on-demand
 * reduction). Free tiers are ignored; the cheapest volume tier is not assumed. Sources:
 *   https://aws.amazon.com/api-gateway/pricing/  (HTTP APIs, first 300 million requests a month)
 *   https://aws.amazon.com/lambda/pricing/       (Arm, first 7.5 billion GB-seconds a month)
 *   https://aws.amazon.com/dynamodb/pricing/on-demand/
 */
export const PRICES = {
  region: 'us-east-1',
  asOf: 'list prices in effect since 1 November 2024',
  apiGatewayHttpPerMillionRequests: 1.0,
  lambdaArmPerMillionRequests: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  dynamoPerMillionWriteRequestUnits: 0.625,
  dynamoPerMillionReadRequestUnits: 0.125,
} as const;

export type Prices = typeof PRICES;

/**
 * Memory of the create-charge function, MB: the house construct's default (lib/service-function.ts,
 * `memorySize ?? 512`), which no API route overrides; test/cdk/stack.test.ts pins it at 512.
 */
export const CREATE_CHARGE_MEMORY_MB = 512;

export const CHARGE_ENDPOINT = 'POST /api/v1/agents/charges';
const CREATED_CASE = 'created (201)';
/** The requests-table case of a warm 201 charge by a payer whose policy has limits (requests.ts). */
export const POLICY_CHARGE_CASE = 'created under a policy with limits (201)';
/** A charge made with a grant key (DESIGN §16): the grant item's counters ride in the same transaction. */
export const GRANT_CHARGE_CASE = 'created with a grant key (201)';
/** x402 (DESIGN §17): a warm settle of a new payment, credited to the agent (requests.ts `warmX402Settle`). */
export const X402_SETTLE_ENDPOINT = 'POST /x402/settle';
export const X402_SETTLE_CASE = 'a new payment, credited (200 success)';
/** x402 purchases (DESIGN §22): a warm purchase under a grant key, held and its payment signed (requests.ts `warmX402Purchase`). */
export const X402_PURCHASE_ENDPOINT = 'POST /api/v1/agents/x402/purchases';
export const X402_PURCHASE_CASE = 'held and signed (201)';
/** The console's Overview (DESIGN §21: at most 3 requests, the session's read included; requests.ts `consoleOverviewCost`). */
export const CONSOLE_OVERVIEW_ENDPOINT = 'GET /console';
/** The requests-table rows of the payer's statement (requests.ts `statementPageCost`, DESIGN §26). */
export const STATEMENT_ENDPOINT = 'GET /api/v1/users/me/statement';
/** The requests-table row of the expiry sweeper (not an endpoint; requests.ts `sweeperCost`). */
export const SWEEPER_ENDPOINT = 'sweeper: expireDueCharges';
/** The requests-table row of one outbox item alone (not an endpoint; requests.ts `outboxCost`). */
export const OUTBOX_ENDPOINT = 'outbox: one more transaction item';

export interface ChargeCostInputs {
  /** Mean time of one charge, ms (Lambda bills each invocation rounded up to the millisecond). */
  handlerMs: number;
  memoryMb: number;
  readUnits: number;
  writeUnits: number;
}

/** USD per million charges, by line item. */
export interface ChargeCost {
  billedMs: number;
  apiGateway: number;
  lambdaRequests: number;
  lambdaDuration: number;
  dynamoReads: number;
  dynamoWrites: number;
  total: number;
}

export function costPerMillionCharges(inputs: ChargeCostInputs, prices: Prices = PRICES): ChargeCost {
  const billedMs = Math.ceil(inputs.handlerMs);
  const gbSecondsPerMillion = 1e6 * (inputs.memoryMb / 1024) * (billedMs / 1000);
  const apiGateway = prices.apiGatewayHttpPerMillionRequests;
  const lambdaRequests = prices.lambdaArmPerMillionRequests;
  const lambdaDuration = gbSecondsPerMillion * prices.lambdaArmPerGbSecond;
  const dynamoReads = inputs.readUnits * prices.dynamoPerMillionReadRequestUnits;
  const dynamoWrites = inputs.writeUnits * prices.dynamoPerMillionWriteRequestUnits;
  return {
    billedMs,
    apiGateway,
    lambdaRequests,
    lambdaDuration,
    dynamoReads,
    dynamoWrites,
    total: apiGateway + lambdaRequests + lambdaDuration + dynamoReads + dynamoWrites,
  };
}

/** The warm 201 charge of the requests table, if the run measured it. */
export function warmCharge(requests: readonly RequestCount[]): RequestCount | undefined {
  return requests.find((q) => q.endpoint === CHARGE_ENDPOINT && q.case === CREATED_CASE && q.state === 'warm' && q.status === 201);
}

/** The warm 201 charge made with a grant key, if the run measured it. */
export function grantCharge(requests: readonly RequestCount[]): RequestCount | undefined {
  return requests.find((q) => q.endpoint === CHARGE_ENDPOINT && q.case === GRANT_CHARGE_CASE && q.state === 'warm' && q.status === 201);
}

/** The warm x402 settle that credited a new payment, if the run measured it. */
export function x402Settle(requests: readonly RequestCount[]): RequestCount | undefined {
  return requests.find((q) => q.endpoint === X402_SETTLE_ENDPOINT && q.case === X402_SETTLE_CASE && q.state === 'warm' && q.status === 200);
}

/** The warm x402 purchase that held and signed, if the run measured it. */
export function x402Purchase(requests: readonly RequestCount[]): RequestCount | undefined {
  return requests.find(
    (q) => q.endpoint === X402_PURCHASE_ENDPOINT && q.case === X402_PURCHASE_CASE && q.state === 'warm' && q.status === 201,
  );
}

/** The most DynamoDB requests a measured signed-in Overview sent (cold or warm), if the run measured it. */
export function consoleOverviewRequests(requests: readonly RequestCount[]): number | undefined {
  const rows = requests.filter((q) => q.endpoint === CONSOLE_OVERVIEW_ENDPOINT);
  return rows.length > 0 ? Math.max(...rows.map(requestTotal)) : undefined;
}

/**
 * The most DynamoDB requests a warm page of the statement sent (DESIGN §26: at most 3), if the run
 * measured it. Warm: the payer's key is cached, as for every route; a cold page adds the key's lookup.
 */
export function statementPageRequests(requests: readonly RequestCount[]): number | undefined {
  const rows = requests.filter((q) => q.endpoint === STATEMENT_ENDPOINT && q.state === 'warm');
  return rows.length > 0 ? Math.max(...rows.map(requestTotal)) : undefined;
}

/** Every DynamoDB command a request sent, reads, writes and anything else. */
export const requestTotal = (q: RequestCount): number => Object.values(q.dynamo).reduce((a, b) => a + b, 0);

/** The warm 201 charge by a payer with a spending policy with limits, if the run measured it. */
export function policyCharge(requests: readonly RequestCount[]): RequestCount | undefined {
  return requests.find((q) => q.endpoint === CHARGE_ENDPOINT && q.case === POLICY_CHARGE_CASE && q.state === 'warm' && q.status === 201);
}

/** The inputs of the formula from a run's figures; undefined when the run lacks one of them. */
export function chargeCostInputs(report: {
  requests: readonly RequestCount[];
  latency: readonly LatencyRow[];
}): ChargeCostInputs | undefined {
  const warm = warmCharge(report.requests);
  const latency = report.latency.find((l) => l.endpoint === CHARGE_ENDPOINT);
  if (!warm || !latency || !Number.isFinite(latency.meanMs)) return undefined;
  return { handlerMs: latency.meanMs, memoryMb: CREATE_CHARGE_MEMORY_MB, readUnits: warm.readUnits, writeUnits: warm.writeUnits };
}

const units = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const NOT_MEASURED = 'not measured in this run';

/** The lines a run ends with (before the throughput ratio line, which stays last). */
export function costSummaryLines(report: { requests: readonly RequestCount[]; latency: readonly LatencyRow[] }): string[] {
  const warm = warmCharge(report.requests);
  const policy = policyCharge(report.requests);
  const grant = grantCharge(report.requests);
  const settle = x402Settle(report.requests);
  const purchase = x402Purchase(report.requests);
  const overview = consoleOverviewRequests(report.requests);
  const statement = statementPageRequests(report.requests);
  const inputs = chargeCostInputs(report);
  const figures = (q: RequestCount) => `requests ${requestTotal(q)} reads ${q.reads} wcu ${units(q.writeUnits)}`;
  return [
    warm ? `bench: warm charge ${figures(warm)}` : `bench: warm charge requests ${NOT_MEASURED}`,
    policy ? `bench: policy charge ${figures(policy)}` : `bench: policy charge requests ${NOT_MEASURED}`,
    grant ? `bench: grant charge ${figures(grant)}` : `bench: grant charge requests ${NOT_MEASURED}`,
    settle ? `bench: x402 settle ${figures(settle)}` : `bench: x402 settle requests ${NOT_MEASURED}`,
    purchase ? `bench: x402 purchase ${figures(purchase)}` : `bench: x402 purchase requests ${NOT_MEASURED}`,
    `bench: console overview requests ${overview ?? NOT_MEASURED}`,
    `bench: statement page requests ${statement ?? NOT_MEASURED}`,
    inputs
      ? `bench: cost per million charges $${costPerMillionCharges(inputs).total.toFixed(2)}`
      : `bench: cost per million charges ${NOT_MEASURED}`,
  ];
}
