import { setAgentEnabled } from '../../functions/store/identity/agent.repository';
/**
 * The withdraw use case against DynamoDB Local: fee math, the one transaction, idempotency,
 * the in-flight lock, and races. HTTP-level checks (auth, header, body order) are in
 * withdrawals.e2e.test.ts.
 */

import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LocalSolana } from '../../bin/local/solana-rpc';
import { config, resetForTests } from '../../functions/config';
import { renderRefusal } from '../../functions/contracts/outcome';
import type { Currency } from '../../functions/core/money';
import { Refusal, refuse } from '../../functions/messages/refusal';
import { usdcTokenAccounts } from '../../functions/rails/solana.token-accounts';
import { readAgentLedger } from '../../functions/store/charges/balance.repository';
import { db, dynamoRequestCounts, resetDynamoRequestCounts } from '../../functions/store/client';
import { getIdempotencyRecord } from '../../functions/store/idempotency.repository';
import { getPayout, listPayouts } from '../../functions/store/payouts/payout.repository';
import { keys } from '../../functions/store/table';
import { drivePayout } from '../../functions/use-cases/payouts/payouts';
import type { WithdrawDeps } from '../../functions/use-cases/payouts/withdrawals';
import { createWithdrawal } from '../support/answers';
import { type FakeMode, FakeRail, fakeRails } from '../support/fake-rail';
import { injectFault } from '../support/faults';
import { fundAgent, fundedAgent, lockOf, payoutIdOf, readyWallet, solanaWallet, startTestChain, withdrawal } from '../support/payouts';
import { createTestTable } from '../support/table';

// USDC wallets' token accounts are looked up on this chain (LiteSVM behind the JSON-RPC stand-in).
let chain: LocalSolana;
beforeAll(async () => {
  await createTestTable();
  chain = await startTestChain();
});
afterAll(async () => {
  await chain?.stop();
});

const sent: { payoutId: string; agentId: string }[] = [];
const queue: WithdrawDeps = {
  enqueue: async (message) => {
    sent.push(message);
  },
};

async function balance(agentId: string, currency: Currency = 'USD'): Promise<number> {
  return (await readAgentLedger(agentId)).balances[currency];
}

describe('withdraw', () => {
  it('answers the breakdown with the 3% fee rounded half up (10.01 USD → 0.30 fee, 9.71 net)', async () => {
    const agentId = await fundedAgent('USD', 50_00);
    const input = withdrawal(agentId, { amount: '10.01', walletAddress: 'agent@example.com' });
    const result = await createWithdrawal(input, queue);
    expect(result.statusCode).toBe(200);
    const payoutId = payoutIdOf(result);
    expect(result.rawBody).toBe(
      `{"success":true,"payoutId":"${payoutId}","breakdown":{"grossAmount":10.01,"platformFeeRate":"3%","platformFee":0.3,` +
        `"netAmount":9.71,"currency":"USD","walletAddress":"agent@example.com","network":"PAYPAL"}}`,
    );
    expect(await getPayout(agentId, payoutId)).toMatchObject({
      status: 'PENDING',
      amount: 10_01,
      fee: 30,
      netAmount: 9_71,
      network: 'PAYPAL',
    });
    expect(await balance(agentId)).toBe(50_00 - 10_01);
  });

  it.each([
    ['USD', '1', '0.03', '0.97'],
    ['USD', '1.16', '0.03', '1.13'],
    ['USD', '1.17', '0.04', '1.13'],
    ['USDC', '1.000001', '0.03', '0.970001'],
    ['USDC', '16.666667', '0.5', '16.166667'],
  ] as const)('%s %s → fee %s, net %s', async (currency, amount, fee, net) => {
    const agentId = await fundedAgent(currency, 100_000_000);
    const input = withdrawal(agentId, { currency, amount });
    const body = JSON.parse((await createWithdrawal(input, queue)).rawBody ?? '{}') as { breakdown: Record<string, unknown> };
    expect(body.breakdown).toMatchObject({
      grossAmount: Number(amount),
      platformFee: Number(fee),
      netAmount: Number(net),
      network: currency === 'USD' ? 'PAYPAL' : 'SOL',
    });
  });

  it('costs one balance read and one TransactWriteItems (and for USDC one getAccountInfo), then queues {payoutId, agentId}', async () => {
    const agentId = await fundedAgent('USDC', 20_000_000);
    const input = withdrawal(agentId, { currency: 'USDC', amount: '20' });
    await usdcTokenAccounts().hasUsdcAccount(readyWallet()); // warm: the mint's program is read once per container
    const rpcBefore = usdcTokenAccounts().calls;
    sent.length = 0;
    resetDynamoRequestCounts();
    const payoutId = payoutIdOf(await createWithdrawal(input, queue));
    expect(dynamoRequestCounts()).toEqual({ BatchGetItemCommand: 1, TransactWriteItemsCommand: 1 });
    expect(usdcTokenAccounts().calls - rpcBefore).toBe(1);
    expect(sent).toEqual([{ payoutId, agentId }]);
    expect(await lockOf(agentId)).toMatchObject({ payoutId });
    expect(await balance(agentId, 'USDC')).toBe(0);
  });

  it('debits across balance shards when no single shard holds the amount', async () => {
    const agentId = await fundedAgent('USD', 3_00);
    await fundAgent(agentId, 'USD', 4_00, 1);
    await fundAgent(agentId, 'USD', 5_00, 2);
    payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '11.5' }), queue));
    const ledger = await readAgentLedger(agentId);
    expect(ledger.balances.USD).toBe(50);
    for (const shard of ledger.shards) expect(shard.balances.USD).toBeGreaterThanOrEqual(0);
  });

  it('replays the first answer for the same key and request, and debits once', async () => {
    const agentId = await fundedAgent('USD', 30_00);
    const input = withdrawal(agentId, { amount: '20' });
    const first = await createWithdrawal(input, queue);
    // The balance is now too low and the lock is held: the replay still answers as the first time.
    const again = await createWithdrawal(input, queue);
    expect(again.statusCode).toBe(200);
    expect(again.rawBody).toBe(first.rawBody);
    expect(again.headers).toEqual({ 'idempotent-replayed': 'true' });
    expect(await balance(agentId)).toBe(10_00);
    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(1);
  });

  it('refuses the same key with a different request (422) and changes nothing', async () => {
    const agentId = await fundedAgent('USD', 30_00);
    const input = withdrawal(agentId, { amount: '5' });
    await createWithdrawal(input, queue);
    for (const changed of [{ amount: '6' }, { walletAddress: 'other@example.com' }]) {
      const differing = withdrawal(agentId, {
        amount: '5',
        walletAddress: input.walletAddress,
        idempotencyKey: input.idempotencyKey,
        ...changed,
      });
      await expect(createWithdrawal(differing, queue)).rejects.toMatchObject({
        statusCode: 422,
        message: 'idempotency key reused with different request',
      });
    }
    expect(await balance(agentId)).toBe(25_00);
  });

  it('refuses more than the balance with 400 insufficient balance and writes nothing', async () => {
    const agentId = await fundedAgent('USD', 9_99);
    const input = withdrawal(agentId, { amount: '10' });
    await expect(createWithdrawal(input, queue)).rejects.toMatchObject({ statusCode: 400, message: 'insufficient balance' });
    expect(await balance(agentId)).toBe(9_99);
    expect(await lockOf(agentId)).toBeUndefined();
    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(0);
    expect(await getIdempotencyRecord(`${agentId}#withdraw`, input.idempotencyKey, new Date())).toBeUndefined();
    // USDC earned does not pay a USD withdrawal.
    await fundAgent(agentId, 'USDC', 100_000_000);
    await expect(createWithdrawal(input, queue)).rejects.toMatchObject({ message: 'insufficient balance' });
  });

  it('refuses a second withdrawal while one is in flight, without touching the balance', async () => {
    const agentId = await fundedAgent('USD', 30_00);
    await createWithdrawal(withdrawal(agentId, { amount: '5' }), queue);
    const second = withdrawal(agentId, { amount: '5' });
    await expect(createWithdrawal(second, queue)).rejects.toMatchObject({ statusCode: 400, message: 'payout already in progress' });
    expect(await balance(agentId)).toBe(25_00);
    // Not remembered under the key: the same request may be retried once the first payout is done.
    expect(await getIdempotencyRecord(`${agentId}#withdraw`, second.idempotencyKey, new Date())).toBeUndefined();
  });

  it('holds one payout in flight per currency: a USD payout waiting at PayPal never blocks a USDC withdrawal', async () => {
    const agentId = await fundedAgent('USD', 30_00);
    await fundAgent(agentId, 'USDC', 30_000_000, 1);
    payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '5' }), queue)); // stays PENDING (UNCLAIMED for weeks)
    const usdc = await createWithdrawal(withdrawal(agentId, { currency: 'USDC', amount: '5' }), queue);
    expect(usdc.statusCode).toBe(200);
    for (const currency of ['USD', 'USDC'] as const) {
      await expect(createWithdrawal(withdrawal(agentId, { currency, amount: '1' }), queue)).rejects.toMatchObject({
        statusCode: 400,
        message: 'payout already in progress',
      });
    }
  });

  it('the kill switch: a disabled agent withdraws nothing, whatever its caller cached, and the answer is 401', async () => {
    const agentId = await fundedAgent('USD', 30_00);
    await setAgentEnabled(agentId, false);
    await expect(createWithdrawal(withdrawal(agentId, { amount: '5' }), queue)).rejects.toMatchObject({
      statusCode: 401,
      message: 'invalid agent',
    });
    expect(await balance(agentId)).toBe(30_00);
    expect(await lockOf(agentId)).toBeUndefined();
    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(0);
  });

  it.each([
    ['0.99', 'amount must be at least 1'],
    ['0', 'amount must be at least 1'],
    ['-5', 'amount must be at least 1'],
    ['5e-1', 'amount must be at least 1'],
    ['1e-7', 'amount has more than 2 decimal places for USD'],
    ['1.001', 'amount has more than 2 decimal places for USD'],
    ['1000000.01', 'amount must not exceed 1000000'],
  ])('refuses amount %s: %s', async (amount, message) => {
    const agentId = await fundedAgent('USD', 10_00);
    // The route's schema refuses it before the use case runs.
    expect(() => withdrawal(agentId, { amount })).toThrow(refuse('invalidInput', message));
    expect(await balance(agentId)).toBe(10_00);
  });

  it('accepts exactly the minimum, 1.00 in either currency', async () => {
    const agentId = await fundedAgent('USD', 1_00);
    await fundAgent(agentId, 'USDC', 1_000_000);
    expect((await createWithdrawal(withdrawal(agentId, { amount: '1.00' }), queue)).statusCode).toBe(200);
    const other = await fundedAgent('USDC', 1_000_000);
    expect((await createWithdrawal(withdrawal(other, { currency: 'USDC', amount: '1.000000' }), queue)).statusCode).toBe(200);
  });

  it('refuses a destination its network cannot pay, before looking at the balance', async () => {
    const agentId = await fundedAgent('USD', 0);
    await expect(
      createWithdrawal(withdrawal(agentId, { currency: 'USDC', walletAddress: 'agent@example.com' }), queue),
    ).rejects.toMatchObject({
      statusCode: 400,
      message: 'invalid solana address',
    });
    await expect(createWithdrawal(withdrawal(agentId, { currency: 'USD', walletAddress: solanaWallet() }), queue)).rejects.toMatchObject({
      statusCode: 400,
      message: 'invalid paypal account',
    });
  });

  it('refuses the platform deposit wallet as a destination with 400 invalid solana address, writing nothing', async () => {
    const agentId = await fundedAgent('USDC', 5_000_000);
    const deposit = solanaWallet();
    process.env.SOLANA_DEPOSIT_ADDRESS = deposit;
    resetForTests();
    try {
      await expect(
        createWithdrawal(withdrawal(agentId, { currency: 'USDC', amount: '2.00', walletAddress: deposit }), queue),
      ).rejects.toMatchObject({ statusCode: 400, message: 'invalid solana address' });
      expect(await balance(agentId, 'USDC')).toBe(5_000_000);
      expect((await listPayouts(agentId, { limit: 10 })).payouts).toEqual([]);
    } finally {
      delete process.env.SOLANA_DEPOSIT_ADDRESS;
      resetForTests();
    }
  });

  it('still answers 200 when the queue refuses the message: the payout stays PENDING for the reconciler', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    const payoutId = payoutIdOf(
      await createWithdrawal(withdrawal(agentId, { amount: '10' }), {
        enqueue: async () => {
          throw new Error('queue unreachable');
        },
      }),
    );
    expect(await getPayout(agentId, payoutId)).toMatchObject({ status: 'PENDING' });
    expect(await balance(agentId)).toBe(0);
  });

  it('retries the transaction when DynamoDB reports a TransactionConflict', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 2);
    try {
      payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '10' }), queue));
    } finally {
      fault.remove();
    }
    expect(fault.hits()).toBe(2);
    expect(await balance(agentId)).toBe(0);
  });
});

async function setShard(agentId: string, usd: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: config().TABLE_NAME,
      Key: keys.agentBalanceShard(agentId, 0),
      UpdateExpression: 'SET USD = :usd',
      ExpressionAttributeValues: { ':usd': usd },
    }),
  );
}

function writesPayout(input: unknown): boolean {
  const items = (input as { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] }).TransactItems ?? [];
  return items.some((item) => item.Put?.Item?.type === 'Payout');
}

/**
 * Makes the next `times` withdrawal TransactWriteItems find shard 0 emptied by someone else just before they
 * run (nothing in the service debits a shard without the lock, so this is the only way to see it).
 */
function drainShardBeforeTransactions(agentId: string, times: number): () => void {
  const name = `drain-${agentId}`;
  let left = times;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && left > 0 && writesPayout(args.input)) {
        left -= 1;
        await setShard(agentId, 0);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => db().middlewareStack.remove(name);
}

describe('withdraw USDC to a wallet without a USDC token account (docs/payouts.md)', () => {
  const nothingWritten = async (agentId: string, idempotencyKey: string, usdc: number) => {
    expect(await balance(agentId, 'USDC')).toBe(usdc);
    expect(await lockOf(agentId)).toBeUndefined();
    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(0);
    expect(await getIdempotencyRecord(`${agentId}#withdraw`, idempotencyKey, new Date())).toBeUndefined();
  };

  it('refuses it at once with 400 destination has no USDC token account, before the balance, writing nothing', async () => {
    const agentId = await fundedAgent('USDC', 20_000_000);
    const input = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: solanaWallet() });
    await expect(createWithdrawal(input, queue)).rejects.toMatchObject({
      statusCode: 400,
      message: 'destination has no USDC token account',
    });
    await nothingWritten(agentId, input.idempotencyKey, 20_000_000);
    // Before the balance: an agent with nothing earned hears about the wallet first.
    const poor = await fundedAgent('USDC', 0);
    const fresh = withdrawal(poor, { currency: 'USDC', amount: '10', walletAddress: solanaWallet() });
    await expect(createWithdrawal(fresh, queue)).rejects.toMatchObject({ message: 'destination has no USDC token account' });
    // `createTokenAccount: false` is the same as leaving it out.
    const explicit = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: solanaWallet(), createTokenAccount: false });
    await expect(createWithdrawal(explicit, queue)).rejects.toMatchObject({ message: 'destination has no USDC token account' });
  });

  it('with createTokenAccount: charges the creation fee (0.50), shows it in the breakdown, takes it from the net, stores it', async () => {
    const agentId = await fundedAgent('USDC', 20_000_000);
    const wallet = solanaWallet();
    const result = await createWithdrawal(
      withdrawal(agentId, { currency: 'USDC', amount: '20', walletAddress: wallet, createTokenAccount: true }),
      queue,
    );
    const payoutId = payoutIdOf(result);
    expect(result.rawBody).toBe(
      `{"success":true,"payoutId":"${payoutId}","breakdown":{"grossAmount":20,"platformFeeRate":"3%","platformFee":0.6,` +
        `"accountCreationFee":0.5,"netAmount":18.9,"currency":"USDC","walletAddress":"${wallet}","network":"SOL"}}`,
    );
    expect(await getPayout(agentId, payoutId)).toMatchObject({
      status: 'PENDING',
      amount: 20_000_000,
      fee: 600_000,
      accountCreationFee: 500_000,
      netAmount: 18_900_000,
    });
    expect(await balance(agentId, 'USDC')).toBe(0);
  });

  it('with createTokenAccount to a wallet that has its account: no creation fee (0 in the breakdown), nothing to create', async () => {
    const agentId = await fundedAgent('USDC', 10_000_000);
    const input = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: readyWallet(), createTokenAccount: true });
    const result = await createWithdrawal(input, queue);
    const body = JSON.parse(result.rawBody ?? '{}') as { breakdown: Record<string, unknown> };
    expect(body.breakdown).toMatchObject({ grossAmount: 10, platformFee: 0.3, accountCreationFee: 0, netAmount: 9.7 });
    expect(await getPayout(agentId, payoutIdOf(result))).toMatchObject({ accountCreationFee: 0, netAmount: 9_700_000 });
  });

  it('refuses a net at or below zero with 400 amount too small to cover fees, writing nothing', async () => {
    const saved = process.env.ACCOUNT_CREATION_FEE;
    const setFee = (fee: string) => {
      process.env.ACCOUNT_CREATION_FEE = fee;
      resetForTests();
    };
    try {
      const agentId = await fundedAgent('USDC', 5_000_000);
      // 1 USDC − 0.03 − 0.97 = 0, and 1 − 0.03 − 1 < 0: both refused.
      for (const fee of ['0.97', '1']) {
        setFee(fee);
        const input = withdrawal(agentId, { currency: 'USDC', amount: '1', walletAddress: solanaWallet(), createTokenAccount: true });
        await expect(createWithdrawal(input, queue)).rejects.toMatchObject({ statusCode: 400, message: 'amount too small to cover fees' });
        await nothingWritten(agentId, input.idempotencyKey, 5_000_000);
      }
      // Any net above zero is paid: 1.030001 − 0.030900 (3%, half up) − 0.97 = 0.029101.
      setFee('0.97');
      const enough = withdrawal(agentId, { currency: 'USDC', amount: '1.030001', walletAddress: solanaWallet(), createTokenAccount: true });
      expect(await getPayout(agentId, payoutIdOf(await createWithdrawal(enough, queue)))).toMatchObject({
        fee: 30_900,
        accountCreationFee: 970_000,
        netAmount: 29_101,
      });
    } finally {
      if (saved === undefined) delete process.env.ACCOUNT_CREATION_FEE;
      else process.env.ACCOUNT_CREATION_FEE = saved;
      resetForTests();
    }
  });

  it('refuses createTokenAccount on a USD withdrawal, naming the field, and a flag that is not a boolean', () => {
    expect(() => withdrawal('a1', { currency: 'USD', createTokenAccount: true })).toThrow(
      refuse('invalidInput', 'createTokenAccount is only valid for USDC withdrawals'),
    );
    expect(withdrawal('a1', { currency: 'USD', createTokenAccount: false })).toMatchObject({ currency: 'USD', createTokenAccount: false });
    expect(() => withdrawal('a1', { currency: 'USDC', createTokenAccount: 'yes' as unknown as boolean })).toThrow(
      refuse('invalidInput', 'createTokenAccount must be a boolean'),
    );
  });

  it('answers 503 solana network unavailable when the RPC node cannot tell, writing nothing; the retry goes through', async () => {
    const agentId = await fundedAgent('USDC', 10_000_000);
    const input = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: solanaWallet(), createTokenAccount: true });
    chain.failNext('getAccountInfo', 1); // the node answers HTTP 503 (the mint's lookup when cold, else the wallet's)
    const refused = await createWithdrawal(input, queue).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(Refusal);
    expect(renderRefusal(refused as Refusal)).toEqual({
      status: 503,
      text: 'solana network unavailable, retry later',
      headers: { 'retry-after': '5' },
    });
    await nothingWritten(agentId, input.idempotencyKey, 10_000_000);
    expect((await createWithdrawal(input, queue)).statusCode).toBe(200);
  });

  it('puts createTokenAccount in the fingerprint: the same key with and without it is 422', async () => {
    const agentId = await fundedAgent('USDC', 30_000_000);
    const wallet = solanaWallet();
    const first = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: wallet, createTokenAccount: true });
    payoutIdOf(await createWithdrawal(first, queue));
    for (const createTokenAccount of [undefined, false]) {
      const differing = withdrawal(agentId, {
        currency: 'USDC',
        amount: '10',
        walletAddress: wallet,
        idempotencyKey: first.idempotencyKey,
        ...(createTokenAccount === undefined ? {} : { createTokenAccount }),
      });
      await expect(createWithdrawal(differing, queue)).rejects.toMatchObject({
        statusCode: 422,
        message: 'idempotency key reused with different request',
      });
    }
  });

  it('replays the first answer, creation fee included, even once the account exists, or is gone again, or the RPC node is down', async () => {
    const agentId = await fundedAgent('USDC', 30_000_000);
    const wallet = solanaWallet();
    const input = withdrawal(agentId, { currency: 'USDC', amount: '10', walletAddress: wallet, createTokenAccount: true });
    const first = await createWithdrawal(input, queue);
    expect(first.rawBody).toContain('"accountCreationFee":0.5,"netAmount":9.2');

    chain.createTokenAccount(wallet); // what the payout does
    const again = await createWithdrawal(input, queue);
    expect([again.rawBody, again.headers]).toEqual([first.rawBody, { 'idempotent-replayed': 'true' }]);

    chain.failNext('getAccountInfo', 1);
    expect((await createWithdrawal(input, queue)).rawBody).toBe(first.rawBody);

    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(1);
    expect(await balance(agentId, 'USDC')).toBe(20_000_000);

    // A withdrawal accepted to an existing account, retried after the owner closed it: the replay.
    const other = await fundedAgent('USDC', 10_000_000);
    const wallet2 = readyWallet();
    const plain = withdrawal(other, { currency: 'USDC', amount: '5', walletAddress: wallet2 });
    const accepted = await createWithdrawal(plain, queue);
    chain.closeTokenAccount(wallet2);
    expect((await createWithdrawal(plain, queue)).rawBody).toBe(accepted.rawBody);
    // A new key to the closed account is refused.
    const fresh = withdrawal(other, { currency: 'USDC', amount: '1', walletAddress: wallet2 });
    await expect(createWithdrawal(fresh, queue)).rejects.toMatchObject({ message: 'destination has no USDC token account' });
  });
});

describe('withdraw when the balance moves underneath', () => {
  it('reads the balance again when a shard holds less than planned, then answers from the new balance', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    await fundAgent(agentId, 'USD', 3_00, 1);
    const restore = drainShardBeforeTransactions(agentId, 1);
    try {
      // 13 USD planned; shard 0's 10 USD vanish; the second round sees 3 USD and refuses 5.
      await expect(createWithdrawal(withdrawal(agentId, { amount: '5' }), queue)).rejects.toMatchObject({
        message: 'insufficient balance',
      });
    } finally {
      restore();
    }
    expect(await balance(agentId)).toBe(3_00);
    expect(await lockOf(agentId)).toBeUndefined();
  });

  it('gives up with 409 when the balance keeps moving, having written nothing', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    const restore = drainShardBeforeTransactions(agentId, 3);
    const refill = () => setShard(agentId, 10_00);
    try {
      // Refill between rounds so every round plans a debit that then finds the shard empty.
      db().middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'BatchGetItemCommand') await refill();
          return next(args);
        },
        { step: 'initialize', name: `refill-${agentId}` },
      );
      await expect(createWithdrawal(withdrawal(agentId, { amount: '5' }), queue)).rejects.toMatchObject({
        statusCode: 409,
        message: 'balance changed while withdrawing, retry',
      });
    } finally {
      restore();
      db().middlewareStack.remove(`refill-${agentId}`);
    }
    expect(await lockOf(agentId)).toBeUndefined();
    expect((await listPayouts(agentId, { limit: 10 })).payouts).toHaveLength(0);
  });

  it('answers 409 in progress when DynamoDB keeps reporting conflicts', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    const fault = injectFault('TransactWriteItemsCommand', 'conflict', 1000);
    try {
      await expect(createWithdrawal(withdrawal(agentId, { amount: '5' }), queue)).rejects.toMatchObject({
        statusCode: 409,
        message: 'request with this Idempotency-Key is in progress',
      });
    } finally {
      fault.remove();
    }
    expect(await balance(agentId)).toBe(10_00);
  });
});

describe('withdraw races', () => {
  it('lets at most one of many concurrent withdrawals through and never overdraws', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    await fundAgent(agentId, 'USD', 5_00, 3);
    const attempts = Array.from({ length: 12 }, () => createWithdrawal(withdrawal(agentId, { amount: '9' }), queue));
    const results = await Promise.allSettled(attempts);
    const accepted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    expect(accepted).toHaveLength(1);
    for (const message of refused) expect(['payout already in progress', 'insufficient balance']).toContain(message);
    const ledger = await readAgentLedger(agentId);
    expect(ledger.balances.USD).toBe(6_00);
    for (const shard of ledger.shards) expect(shard.balances.USD).toBeGreaterThanOrEqual(0);
    expect((await listPayouts(agentId, { limit: 20 })).payouts).toHaveLength(1);
  });

  it('turns concurrent requests with the same key into one payout with one answer', async () => {
    const agentId = await fundedAgent('USDC', 50_000_000);
    const input = withdrawal(agentId, { currency: 'USDC', amount: '7.5' });
    const results = await Promise.all(Array.from({ length: 8 }, () => createWithdrawal(input, queue)));
    const ids = new Set(results.map(payoutIdOf));
    expect(ids.size).toBe(1);
    expect(new Set(results.map((r) => r.rawBody)).size).toBe(1);
    expect(results.filter((r) => r.headers?.['idempotent-replayed'] === 'true')).toHaveLength(7);
    expect(await balance(agentId, 'USDC')).toBe(42_500_000);
    expect((await listPayouts(agentId, { limit: 20 })).payouts).toHaveLength(1);
  });
});

describe('the platform fee over the agent’s withdrawals (docs/payouts.md, "The platform fee")', () => {
  const rail = new FakeRail();
  const drive = async (agentId: string, payoutId: string, mode: FakeMode) => {
    rail.mode = mode;
    return drivePayout({ agentId, payoutId }, { railFor: fakeRails(rail) });
  };
  const basisOf = async (agentId: string, currency: Currency = 'USD') =>
    (await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.payoutFees(agentId, currency), ConsistentRead: true })))
      .Item;
  const withdrawAndFinish = async (agentId: string, amount: string, mode: FakeMode = 'complete') => {
    const payoutId = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount }), queue));
    await drive(agentId, payoutId, mode);
    return (await getPayout(agentId, payoutId)) as NonNullable<Awaited<ReturnType<typeof getPayout>>>;
  };

  it('five withdrawals of 1.16 pay 0.03, 0.04, 0.03, 0.04, 0.03: 0.17 in all, as one of 5.80', async () => {
    const agentId = await fundedAgent('USD', 5_80);
    const fees: number[] = [];
    for (let i = 0; i < 5; i++) fees.push((await withdrawAndFinish(agentId, '1.16')).fee);
    expect(fees).toEqual([3, 4, 3, 4, 3]);
    expect(await basisOf(agentId)).toMatchObject({ withdrawn: 5_80, feesPaid: 17, currency: 'USD', agentId, type: 'PayoutFees' });
    expect(await balance(agentId)).toBe(0);
  });

  it('a FAILED payout gives its gross and its share of the fee back: the next withdrawal pays as if it never was', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    expect((await withdrawAndFinish(agentId, '1.16')).fee).toBe(3);
    const failed = await withdrawAndFinish(agentId, '1.16', 'fail');
    expect([failed.status, failed.fee]).toEqual(['FAILED', 4]);
    expect(await basisOf(agentId)).toMatchObject({ withdrawn: 1_16, feesPaid: 3 });
    // 3% of 2.32 is 0.0696 → 0.07, less the 0.03 paid: 0.04, as the failed one was charged.
    expect((await withdrawAndFinish(agentId, '1.16')).fee).toBe(4);
    expect(await balance(agentId)).toBe(10_00 - 2_32);
  });

  it('keeps each currency apart: USDC withdrawals do not count toward the USD fee', async () => {
    const agentId = await fundedAgent('USD', 5_00);
    await fundAgent(agentId, 'USDC', 5_000_000);
    expect((await withdrawAndFinish(agentId, '1.16')).fee).toBe(3);
    const usdc = payoutIdOf(await createWithdrawal(withdrawal(agentId, { currency: 'USDC', amount: '1.16' }), queue));
    expect((await getPayout(agentId, usdc))?.fee).toBe(34_800);
    expect(await basisOf(agentId, 'USDC')).toMatchObject({ withdrawn: 1_160_000, feesPaid: 34_800 });
    expect(await basisOf(agentId)).toMatchObject({ withdrawn: 1_16, feesPaid: 3 });
  });

  it('reads the basis again when the payout in flight is refunded between its read and its commit', async () => {
    const agentId = await fundedAgent('USD', 10_00);
    expect((await withdrawAndFinish(agentId, '1.16')).fee).toBe(3);
    // A payout in flight (PENDING, its lock held), charged 0.04 on the basis 1.16 → 2.32.
    const inFlight = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '1.16' }), queue));
    expect((await getPayout(agentId, inFlight))?.fee).toBe(4);
    // The next withdrawal reads the basis (2.32, 0.07) and the balance; before it commits, the
    // payout in flight fails, gives back 1.16 and 0.04 and releases the lock. Had its commit not
    // been conditioned on the basis as read, it would charge 3% of 3.48 (0.10) less 0.07: 0.03.
    const name = `refund-between-read-and-commit-${Date.now()}`;
    let reads = 0;
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'BatchGetItemCommand' && ++reads === 1) await drive(agentId, inFlight, 'fail');
        return out;
      },
      { step: 'initialize', name },
    );
    let next: string;
    try {
      next = payoutIdOf(await createWithdrawal(withdrawal(agentId, { amount: '1.16' }), queue));
    } finally {
      db().middlewareStack.remove(name);
    }
    expect(reads).toBeGreaterThanOrEqual(2);
    expect((await getPayout(agentId, inFlight))?.status).toBe('FAILED');
    // Read again: 3% of 2.32 less 0.03 paid.
    expect((await getPayout(agentId, next))?.fee).toBe(4);
    expect(await basisOf(agentId)).toMatchObject({ withdrawn: 2_32, feesPaid: 7 });
  });
});
