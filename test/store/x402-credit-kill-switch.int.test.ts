/**
 * The x402 credit's kill switch (store/x402-facilitator/x402.repository.ts creditSettlement with `agentKeyHash`):
 * settle's credit is made for the key settle was asked with, and its transaction checks that key's
 * agent item enabled, as a withdrawal does; the reconciler's (no key) credits the claiming agent.
 * The settle route reads the item before signing (test/security/disabled-agent-x402-settle); this
 * is the window between that read and the credit, which no e2e request can hold open.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import bs58 from 'bs58';
import { config } from '../../functions/config';
import { AgentDisabledError } from '../../functions/core/errors';
import { newAgentId } from '../../functions/core/ids';
import { AGENT_KEY_PREFIX, generateKey, hashKey } from '../../functions/core/keys';
import { db } from '../../functions/store/client';
import { moveAgentKey, setAgentEnabled } from '../../functions/store/identity/agent.repository';
import { createAgent } from '../../functions/store/identity/agent-registration.repository';
import { keys } from '../../functions/store/table';
import { claimSettlement, creditSettlement, getSettlement } from '../../functions/store/x402-facilitator/x402.repository';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const AMOUNT = 10_000;

async function agentWithClaim() {
  const now = new Date();
  const key = generateKey(AGENT_KEY_PREFIX);
  const id = newAgentId();
  await createAgent({
    id,
    name: `seller ${id}`,
    email: `${id}@example.com`,
    website: 'https://example.com',
    enabled: true,
    createdAt: now.toISOString(),
    keyHash: hashKey(key),
  });
  const signature = bs58.encode(randomBytes(64));
  const messageHash = randomBytes(32).toString('hex');
  const settlement = await claimSettlement(
    {
      messageHash,
      signature,
      agentId: id,
      amount: AMOUNT,
      payer: bs58.encode(randomBytes(32)),
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      resource: null,
    },
    now,
  );
  const credit = (agentKeyHash?: string) =>
    creditSettlement({
      settlement,
      record: {
        id: `x402_${randomBytes(8).toString('hex')}`,
        agentId: id,
        amount: AMOUNT,
        payer: settlement.payer,
        transaction: signature,
        network: settlement.network,
        resource: null,
        createdAt: now.toISOString(),
      },
      response: '{"success":true}',
      idempotency: { scope: `${id}#x402-settle`, key: signature, record: { fingerprint: 'f', statusCode: 200, body: '{}' } },
      events: [],
      now,
      ...(agentKeyHash === undefined ? {} : { agentKeyHash }),
    });
  return { id, key, signature, messageHash, credit };
}

const chainCredit = async (signature: string) =>
  (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.chainCredit(signature), ConsistentRead: true }))).Item;

describe('the x402 credit checks the seller’s agent item when settle makes it', () => {
  it('refuses a disabled agent’s credit and moves nothing; the reconciler’s credit (no key) then credits the claim once', async () => {
    const { id, key, signature, messageHash, credit } = await agentWithClaim();
    await setAgentEnabled(id, false);
    await expect(credit(hashKey(key))).rejects.toBeInstanceOf(AgentDisabledError);
    expect((await getSettlement(messageHash))?.status).toBe('PENDING');
    expect(await chainCredit(signature)).toBeUndefined();

    await credit();
    expect((await getSettlement(messageHash))?.status).toBe('CREDITED');
    expect(await chainCredit(signature)).toMatchObject({ rail: 'x402', amount: AMOUNT });
  });

  it('refuses the credit for a key rotated away; credits for the agent’s current key', async () => {
    const { key, messageHash, credit } = await agentWithClaim();
    const newKey = generateKey(AGENT_KEY_PREFIX);
    await moveAgentKey(hashKey(key), hashKey(newKey), new Date());
    await expect(credit(hashKey(key))).rejects.toBeInstanceOf(AgentDisabledError);
    expect((await getSettlement(messageHash))?.status).toBe('PENDING');
    await credit(hashKey(newKey));
    expect((await getSettlement(messageHash))?.status).toBe('CREDITED');
  });
});
