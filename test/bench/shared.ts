/**
 * DESIGN §18, counted from keys, not timings: which items every charge of one agent (or of one
 * payer) touches, and how 1000 charges of one agent spread their writes over partitions. Each
 * charge is made through the real create-charge handler inside a counting scope
 * (requests.ts `invokeCounted`); the scope keeps the key of every item each write request sends
 * and the table and index partitions it lands in (written.ts), read from the requests themselves,
 * so whatever layout the store sends is what gets counted.
 *
 * On AWS two concurrent transactions that touch the same item (a ConditionCheck included)
 * conflict and one is cancelled: an item every charge touches serializes them. A partition
 * takes about 1000 write units a second: a partition that most charges write caps them too.
 */
import { type BenchContext, enabledAgent, fundedUser, inBatches, type Party } from './context';
import { chargeEvent, invokeCounted } from './requests';
import { familyOf, type PartitionSpread, partitionSpread, sharedByAll, type TouchedItem } from './written';

export interface SharedItems {
  charges: number;
  /** How many payers (agent run) or agents (payer run) the charges went to. */
  counterparts: number;
  /** The items every charge touched, as `<key family>|<SK> (<operation>)`: ids stay out of reports. */
  shared: string[];
}

export interface SharedItemsResult {
  agent: SharedItems;
  payer: SharedItems;
  partitions: PartitionSpread;
  /** Write units one charge of the agent run cost, as DynamoDB Local reports them (mean). */
  writeUnitsPerCharge: number;
}

/** Charges per counted run (DESIGN §18). */
export const SHARED_RUN = { agentCharges: 100, payerCharges: 100, payerAgents: 20, partitionCharges: 1000 } as const;

export interface Runs {
  agentCharges: number;
  payerCharges: number;
  payerAgents: number;
  /** At least agentCharges: the agent run's payers are the first of these. */
  partitionCharges: number;
}

const CHARGE_AMOUNT = '0.01';

async function chargeAll(pairs: { agent: Party; user: Party }[], tag: string): Promise<{ touched: TouchedItem[][]; writeUnits: number }> {
  let writeUnits = 0;
  const touched = await inBatches(pairs.length, 4, async (i) => {
    const { agent, user } = pairs[i] as { agent: Party; user: Party };
    const res = await invokeCounted('create-charge', chargeEvent(agent, user, `${tag}-${i}`, CHARGE_AMOUNT));
    if (res.status !== 201) throw new Error(`charge ${i} of ${tag} answered ${res.status}: ${res.body}`);
    writeUnits += res.scope.writeUnits;
    return res.scope.touched;
  });
  return { touched, writeUnits };
}

function sharedItems(touched: TouchedItem[][], counterparts: number): SharedItems {
  const ops = new Map<string, string>();
  for (const t of touched.flat()) ops.set(t.item, t.op);
  const shared = sharedByAll(touched.map((items) => new Set(items.map((t) => t.item)))).map((item) => {
    const [pk = '', sk = ''] = item.split('|');
    return `${familyOf(pk)}|${sk} (${ops.get(item)})`;
  });
  return { charges: touched.length, counterparts, shared };
}

/**
 * The three runs: 100 charges by one agent to 100 payers; 100 charges by one payer to 20 agents;
 * 1000 charges by one agent, each to a payer of its own (so every partition of the payer's side
 * is written once and only what the agent's charges share can recur).
 */
export async function sharedItemsAndPartitions(ctx: BenchContext, run: Runs = SHARED_RUN): Promise<SharedItemsResult> {
  const tag = `sh-${Date.now()}`;
  const agent = await enabledAgent(ctx);
  const payers = await inBatches(run.partitionCharges, 8, () => fundedUser(ctx, { USD: '1' }));

  const byAgent = await chargeAll(
    payers.slice(0, run.agentCharges).map((user) => ({ agent, user })),
    `${tag}-agent`,
  );

  const payer = await fundedUser(ctx, { USD: '100' });
  const agents = await inBatches(run.payerAgents, 4, () => enabledAgent(ctx));
  const byPayer = await chargeAll(
    Array.from({ length: run.payerCharges }, (_, i) => ({ agent: agents[i % agents.length] as Party, user: payer })),
    `${tag}-payer`,
  );

  const spreadAgent = await enabledAgent(ctx);
  const spread = await chargeAll(
    payers.map((user) => ({ agent: spreadAgent, user })),
    `${tag}-spread`,
  );

  return {
    agent: sharedItems(byAgent.touched, run.agentCharges),
    payer: sharedItems(byPayer.touched, run.payerAgents),
    partitions: partitionSpread(spread.touched),
    writeUnitsPerCharge: byAgent.writeUnits / run.agentCharges,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(1).replace(/\.0$/, '')}%`;

/** The counted lines a run prints (before the cost lines); undefined: not measured. */
export function sharedSummaryLines(result: SharedItemsResult | undefined): string[] {
  if (!result) return [];
  const p = result.partitions;
  return [
    `bench: items shared by all charges of one agent ${result.agent.shared.length}`,
    `bench: partitions written by ${p.charges} charges of one agent ${p.partitions} max share ${pct(p.maxShare)}`,
    `bench: items shared by all charges of one payer ${result.payer.shared.length}`,
  ];
}

/** What the counted lines stand for, for the run's log. */
export function sharedDetailLines(result: SharedItemsResult): string[] {
  const p = result.partitions;
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none');
  return [
    `  shared by ${result.agent.charges} charges of one agent to ${result.agent.counterparts} payers: ${list(result.agent.shared)}`,
    `  shared by ${result.payer.charges} charges of one payer to ${result.payer.counterparts} agents: ${list(result.payer.shared)}`,
    `  ${p.charges} charges of one agent (a payer each): ${p.writes} partition writes, ${p.partitions} partitions written by more than one charge, ${p.singleUse} by one only; hottest ${p.hottest} (${pct(p.maxShare)} of the writes, written by ${pct(p.hottestChargeShare)} of the charges)`,
    `  write units per charge ${result.writeUnitsPerCharge.toFixed(1)}`,
  ];
}
