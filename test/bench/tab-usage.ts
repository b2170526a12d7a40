/**
 * What one use of a tab costs (DESIGN §29, docs/tabs.md "Cost"), as the benchmark counts it: a warm
 * POST /api/v1/agents/tabs/{id}/usage through the route's real handler, its DynamoDB requests, read
 * and write units, and the items every use of one payer's tabs touched (from the keys sent: 0 when
 * each tab is its own partition). Priced with the bench's own table (cost.ts `PRICES`).
 */

import { type BenchContext, enabledAgent, fundedUser, type Party } from './context';
import { CREATE_CHARGE_MEMORY_MB, costPerMillionCharges } from './cost';
import { apiEvent, invokeCounted } from './requests';
import { sharedByAll } from './written';

export const TAB_USAGE_ENDPOINT = 'POST /api/v1/agents/tabs/{id}/usage';

export interface TabUsageCost {
  status: number;
  dynamo: Record<string, number>;
  requests: number;
  reads: number;
  writeUnits: number;
  readUnits: number;
  ms: number;
  /** Items every use (of two tabs of one payer, by two agents) touched. */
  shared: string[];
}

let seq = 0;

async function openTab(agent: Party, user: Party): Promise<string> {
  const res = await invokeCounted(
    'agent-open-tab',
    apiEvent('POST', '/api/v1/agents/tabs', '/api/v1/agents/tabs', {
      headers: { 'x-agent-key': agent.key, 'x-user-key': user.key, 'idempotency-key': `bench-tab-${Date.now()}-${++seq}` },
      body: '{"currency":"USD","limit":100,"description":"bench"}',
    }),
  );
  if (res.status !== 201) throw new Error(`tab open answered ${res.status}: ${res.body}`);
  return (JSON.parse(res.body) as { id: string }).id;
}

const useEvent = (agent: Party, tabId: string) =>
  apiEvent('POST', '/api/v1/agents/tabs/{id}/usage', `/api/v1/agents/tabs/${tabId}/usage`, {
    headers: { 'x-agent-key': agent.key, 'idempotency-key': `bench-use-${Date.now()}-${++seq}` },
    body: '{"amount":0.01,"description":"1000 tokens"}',
    params: { id: tabId },
  });

/** A warm use (after one use of the same tab in this process), and the items uses of one payer's tabs share. */
export async function tabUsageCost(ctx: BenchContext, uses = 10): Promise<TabUsageCost> {
  const user = await fundedUser(ctx, { USD: '500' });
  const agents = [await enabledAgent(ctx), await enabledAgent(ctx)];
  const tabs = await Promise.all(agents.map((agent) => openTab(agent, user)));
  const touched: Set<string>[] = [];
  let warm: Awaited<ReturnType<typeof invokeCounted>> | undefined;
  for (let i = 0; i < uses; i++) {
    const k = i % 2;
    const res = await invokeCounted('agent-use-tab', useEvent(agents[k] as Party, tabs[k] as string));
    if (res.status !== 200) throw new Error(`tab use answered ${res.status}: ${res.body}`);
    touched.push(new Set(res.scope.touched.map((t) => t.item)));
    if (i >= 2) warm = res;
  }
  if (!warm) throw new Error('no warm use measured');
  const dynamo = Object.fromEntries([...warm.scope.dynamo.entries()].sort());
  const reads = ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems'].reduce((a, n) => a + (warm?.scope.dynamo.get(n) ?? 0), 0);
  return {
    status: warm.status,
    dynamo,
    requests: Object.values(dynamo).reduce((a, b) => a + b, 0),
    reads,
    readUnits: warm.scope.readUnits,
    writeUnits: warm.scope.writeUnits,
    ms: warm.ms,
    shared: sharedByAll(touched),
  };
}

/**
 * The bench's lines for tabs. The price is DESIGN §29's: API Gateway and Lambda's requests ($1.2 a
 * million) and the units DynamoDB reports; the Lambda's duration is left out (a use's handler time on
 * this shared machine says little about AWS's, and the charge's line prices it apart).
 */
export function tabUsageLines(cost: TabUsageCost): string[] {
  const price = costPerMillionCharges({
    handlerMs: 0,
    memoryMb: CREATE_CHARGE_MEMORY_MB,
    readUnits: cost.readUnits,
    writeUnits: cost.writeUnits,
  });
  return [
    `bench: tab usage requests ${cost.requests} reads ${cost.reads} wcu ${cost.writeUnits}`,
    `bench: cost per million tab uses $${price.total.toFixed(2)}`,
    `bench: items shared by all uses of one payer's tabs ${cost.shared.length}`,
  ];
}
