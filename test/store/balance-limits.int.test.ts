/**
 * Balances can never leave the exact-integer range: every credit's condition stops at
 * MAX_BALANCE_MINOR, and a value that got there anyway (an operator's edit) is read loudly.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../functions/config';
import { creditSchema } from '../../functions/contracts/request.schemas';
import { newAgentId, newUserId } from '../../functions/core/ids';
import { hashKey } from '../../functions/core/keys';
import { MAX_BALANCE_MINOR } from '../../functions/core/money';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { db } from '../../functions/store/client';
import { getUser } from '../../functions/store/identity/user.repository';
import { CorruptAmountError } from '../../functions/store/numbers';
import { keys } from '../../functions/store/table';
import { testAgent } from '../support/agents';
import { createCharge, createUserWithKey, creditUserBalance } from '../support/answers';
import { fundAgent } from '../support/payouts';
import { viaSchema } from '../support/requests';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const userKeys = new Map<string, string>();
async function userWith(usd: string): Promise<string> {
  const { id, userKey } = (await createUserWithKey()).body as { id: string; userKey: string };
  userKeys.set(id, hashKey(userKey));
  await creditUserBalance({ userId: id, idempotencyKey: `seed-${id}`, ...viaSchema(creditSchema, { amount: usd, currency: 'USD' }) });
  return id;
}

describe('balance limits', () => {
  it('refuses a charge that would take an agent shard past the cap, and moves nothing', async () => {
    const agent = await testAgent();
    for (let shard = 0; shard < config().BALANCE_SHARDS; shard++) await fundAgent(agent.id, 'USD', MAX_BALANCE_MINOR, shard);
    const userId = await userWith('5');
    await expect(
      createCharge({
        agent,
        userId,
        userKeyHash: userKeys.get(userId) ?? '',
        baseUrl: 'http://127.0.0.1',
        idempotencyKey: 'cap-1',
        amount: 1_00,
        currency: 'USD',
        description: '',
      }),
    ).rejects.toMatchObject({ statusCode: 409, message: 'agent balance limit reached, withdraw first' });
    expect((await getUser(userId))?.balances.USD).toBe(5_00);
  });

  it('refuses an admin credit that would take a user past the cap with 400, crediting nothing', async () => {
    const userId = await userWith('1');
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: { ...keys.user(userId), type: 'User', userId, USD: MAX_BALANCE_MINOR - 50, USDC: 0, createdAt: new Date().toISOString() },
      }),
    );
    await expect(creditUserBalance({ userId, idempotencyKey: 'over', amount: 1_00, currency: 'USD' })).rejects.toMatchObject({
      statusCode: 400,
      message: 'amount would take the balance past its limit',
    });
    expect((await getUser(userId))?.balances.USD).toBe(MAX_BALANCE_MINOR - 50);
  });

  it('reads a balance past 2^53 (returned by the SDK as a BigInt) as an error, never as zero', async () => {
    const agentId = newAgentId();
    await db().send(
      new PutCommand({
        TableName: config().TABLE_NAME,
        Item: { ...keys.agentBalanceShard(agentId, 0), type: 'AgentBalanceShard', agentId, USD: 2n ** 60n },
      }),
    );
    await expect(readAgentLedger(agentId)).rejects.toBeInstanceOf(CorruptAmountError);
  });

  it('reads a user balance an operator typed as text as an error', async () => {
    const userId = newUserId();
    await db().send(
      new PutCommand({ TableName: config().TABLE_NAME, Item: { ...keys.user(userId), type: 'User', userId, USD: '100', USDC: 0 } }),
    );
    await expect(getUser(userId)).rejects.toBeInstanceOf(CorruptAmountError);
  });
});
