/**
 * The kill switch's fan-out (DESIGN §18, docs/data-model.md "Kill switch"): copies an agent item's
 * `enabled` and key hash to every one of the agent's balance shards, which is what a charge's
 * condition reads (store/charges/balance.repository.ts). It runs on the table stream (filtered to agent
 * items, ./stream-filter.ts), so an operator's flip of `enabled` in the DynamoDB console stops or
 * starts the agent's charges within the stream's delay; the service's own writes of the agent item
 * (the admin PATCH, key rotation, an agent created enabled) already wrote the shards in their
 * transaction, and their records here change nothing. `npm run admin -- kill-switch-backfill` runs
 * the same copy for every agent (the deploy that introduces the shards' copy, docs/operating/runbooks.md).
 *
 * Idempotent and order-safe: what is copied is the agent item as the record's new image shows it
 * (or, when that is no longer the item's state, the item read again, strongly consistent), written
 * to every shard in ONE transaction together with a ConditionCheck that the agent item is still as
 * taken. So a copy is never older than the
 * item at its commit: a retried or late record copies the current state, a copier that read before
 * an operator's flip (or the admin PATCH, or a rotation) is cancelled and reads again, and no
 * charge ever sees shards half switched. An item that is gone (a rotation moved it: the new
 * key's copy was written by the rotation) turns its own key's copy off, shard by shard, and nothing
 * else. Missing shards are created.
 *
 * It also keeps the operator's list of agents by state (GSI2, agent.repository.ts `listAgents`) true
 * to a console edit: where the item's list entry is not its `enabled`'s, the transaction's check of
 * the item is an update of that entry under the same condition (`agentUnchanged`). So the backfill
 * lists the agents registered before the list existed, too.
 */
import { logger } from '../observability/logger';
import { getAgentById, listedRight, readAgentItem, scanAgentKeys } from '../store/identity/agent.repository';
import { clearKillSwitch, copyKillSwitch } from '../store/identity/kill-switch.repository';
import { itemOfImage } from '../store/stream-image';
import { keys } from '../store/table';
import { closeTabsOf } from '../use-cases/tabs/close';

/** The parts of a stream record the fan-out reads (Lambda's DynamoDBRecord and the local poller's alike). */
export interface AgentChangeRecord {
  eventName?: string;
  dynamodb?: {
    Keys?: Record<string, unknown>;
    NewImage?: Record<string, unknown>;
    OldImage?: Record<string, unknown>;
    SequenceNumber?: string;
  };
}

/** How many times the copy is read and written again while the agent item keeps changing under it. */
const MAX_ROUNDS = 5;

const AGENT_KEY_PK_PREFIX = keys.agent('').PK;

/**
 * Fans out records in order; returns the sequence number of the first that failed, if any (the
 * stream retries from it). Of the records of one agent item in a batch only the last is copied:
 * each copy writes the item's state at its commit, so the earlier ones would be written over at
 * once, and a flip queued behind them would wait for their transactions.
 */
export async function fanOutRecords(records: readonly AgentChangeRecord[]): Promise<string | undefined> {
  const agents = records.map(agentOf);
  const lastOf = new Map(agents.map((agent, at) => [agent?.keyHash, at]));
  for (const [at, record] of records.entries()) {
    const agent = agents[at];
    if (!agent || lastOf.get(agent.keyHash) !== at) continue;
    try {
      await fanOutKillSwitch(agent.keyHash, agent.agentId, agent.image);
    } catch (error) {
      logger().error('kill switch fan-out failed; the stream retries from this record', {
        sequenceNumber: record.dynamodb?.SequenceNumber,
        agentId: agent.agentId,
        error: error instanceof Error ? error.message : String(error),
      });
      return record.dynamodb?.SequenceNumber ?? '';
    }
  }
  return undefined;
}

/**
 * The agent item a record is about: its key hash (from the keys), agentId (from either image), and
 * the item as the write left it (the new image; none for a removal).
 */
function agentOf(record: AgentChangeRecord): { keyHash: string; agentId: string; image?: Record<string, unknown> } | undefined {
  const image = (raw: Record<string, unknown> | undefined) => (raw ? itemOfImage(raw) : undefined);
  const after = image(record.dynamodb?.NewImage);
  // The fan-out's own mending of the list entry: its transaction wrote the shards from this very
  // state. (An entry changed to anything else, or removed, by hand, is mended again below.)
  if (after && onlyListEntryChanged(record) && listedRight(after)) return undefined;
  const item = after ?? image(record.dynamodb?.OldImage);
  const pk = image(record.dynamodb?.Keys)?.PK ?? item?.PK;
  if (typeof pk !== 'string' || !pk.startsWith(AGENT_KEY_PK_PREFIX) || typeof item?.agentId !== 'string') return undefined;
  const keyHash = pk.slice(AGENT_KEY_PK_PREFIX.length);
  return after?.PK === pk ? { keyHash, agentId: item.agentId, image: after } : { keyHash, agentId: item.agentId };
}

/** The index attributes of the operator's list, which the fan-out itself writes (agentUnchanged). */
const LIST_ENTRY = new Set(['GSI2PK', 'GSI2SK']);

/** A MODIFY that changed nothing but the item's list entry: nothing the shards copy changed. */
function onlyListEntryChanged(record: AgentChangeRecord): boolean {
  const before = record.dynamodb?.OldImage;
  const after = record.dynamodb?.NewImage;
  if (record.eventName !== 'MODIFY' || !before || !after) return false;
  const rest = (image: Record<string, unknown>) =>
    JSON.stringify(
      Object.keys(image)
        .filter((name) => !LIST_ENTRY.has(name))
        .sort()
        .map((name) => [name, image[name]]),
    );
  return rest(before) === rest(after);
}

/**
 * Copies the kill switch of the agent item of `keyHash` (of agent `agentId`) to all its shards:
 * take the item (the stream record's new image, else a strongly consistent read), write every
 * shard conditioned on the item being unchanged since, read it again if it was not.
 */
export async function fanOutKillSwitch(keyHash: string, agentId: string, image?: Record<string, unknown>): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // The record's own image first (no read): the transaction's check proves it is still the item's state.
    const item = round === 0 && image ? image : await readAgentItem(keyHash);
    if (!item) {
      await clearKillSwitch(agentId, keyHash);
      return;
    }
    if (await copyKillSwitch(item)) {
      // A disabled agent's tabs close at what they used before the switch (docs/tabs.md): its uses read nothing to check it.
      // A tab that could not be closed fails the record, so the stream delivers it again (the copy is
      // idempotent): left open, its uses would go on.
      if (item.enabled !== true && (await closeTabsOf({ agentId }, 'agent disabled')).failed > 0) {
        throw new Error('a disabled agent has open tabs that could not be closed');
      }
      return;
    }
  }
  throw new Error('the agent item kept changing while its kill switch was copied');
}

/** What a backfill did. */
export interface BackfillReport {
  agents: number;
  /** The agents whose copy could not be written (run it again; every copy is idempotent). */
  failed: { agentId: string; error: string }[];
}

/**
 * The fan-out for every agent item (a Scan of the table), or for one agent: the copy a deploy
 * that introduces the shards' kill switch needs for the agents that exist already, and the
 * operator's answer to a note in the fan-out's failure queue (docs/operating/runbooks.md). Safe while the
 * service runs: each copy is the item read again, verified after the write.
 */
export async function backfillKillSwitch(opts: { agentId?: string } = {}): Promise<BackfillReport> {
  const report: BackfillReport = { agents: 0, failed: [] };
  const copy = async (agent: { keyHash: string; agentId: string }) => {
    report.agents += 1;
    try {
      await fanOutKillSwitch(agent.keyHash, agent.agentId);
    } catch (error) {
      report.failed.push({ agentId: agent.agentId, error: error instanceof Error ? error.message : String(error) });
    }
  };
  if (opts.agentId !== undefined) {
    const agent = await getAgentById(opts.agentId);
    if (agent) await copy({ keyHash: agent.keyHash, agentId: agent.id });
    return report;
  }
  for await (const page of scanAgentKeys()) {
    for (const agent of page) await copy(agent);
  }
  return report;
}
