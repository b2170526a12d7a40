/**
 * Rail secrets on AWS (Secrets Manager): the stack creates the hot-wallet, RPC-URL and PayPal
 * secrets empty until an operator puts a value. Such a secret must surface as a RailConfigError
 * naming it (the operator alarm counts that name), never as a generic worker error. Faults are
 * injected into the service's own Secrets Manager client as middleware, the way test/faults/inject.ts
 * does for DynamoDB: the answer is made before any request leaves, so no AWS is needed.
 */
import { randomUUID } from 'node:crypto';
import { ResourceNotFoundException, SecretsManagerServiceException } from '@aws-sdk/client-secrets-manager';
import { ComputeBudgetInstruction, Keypair, Transaction } from '@solana/web3.js';
import { type LocalSolana, startLocalSolana } from '../../bin/local/solana-rpc';
import { resetForTests } from '../../functions/config';
import { OPERATOR_RAIL_ERRORS } from '../../functions/observability/metric-names';
import { railFor } from '../../functions/rails';
import { RailConfigError } from '../../functions/rails/errors';
import { secretsClient } from '../../functions/store/secrets';
import { MemoryCheckpoint } from './checkpoint';

const HOT_WALLET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:agent-payment-service/test/solana-hot-wallet-AbCdEf';
const RPC_URL_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:agent-payment-service/test/solana-rpc-url-AbCdEf';
const PAYPAL_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:agent-payment-service/test/paypal-credentials-AbCdEf';

/** What GetSecretValue answers for a secret created without a value: no AWSCURRENT version. */
const noValueYet = () =>
  new ResourceNotFoundException({
    message: "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
    $metadata: { httpStatusCode: 400 },
  });
const throttled = () =>
  new SecretsManagerServiceException({
    name: 'ThrottlingException',
    $fault: 'client',
    message: 'Rate exceeded',
    $metadata: { httpStatusCode: 400 },
  });

type Answer = { value: string } | { error: () => Error };
let answers: Record<string, Answer> = {};
const MIDDLEWARE = 'test-secret-answers';

const saved = { ...process.env };

function useEnv(env: Record<string, string>): void {
  process.env = { ...saved };
  for (const key of ['SOLANA_HOT_WALLET_SECRET', 'PAYPAL_CLIENT_ID', 'PAYPAL_CLIENT_SECRET', 'SOLANA_RPC_URL']) delete process.env[key];
  Object.assign(process.env, env);
  resetForTests();
}

beforeAll(() => {
  // Answers GetSecretValue from `answers` at the initialize step: nothing is signed or sent.
  secretsClient().middlewareStack.add(
    (next, context) => async (args) => {
      const id = (args.input as { SecretId?: string }).SecretId ?? '';
      const answer = answers[id];
      if (context.commandName !== 'GetSecretValueCommand' || !answer) return next(args);
      if ('error' in answer) throw answer.error();
      return { output: { $metadata: {}, ARN: id, SecretString: answer.value }, response: {} } as Awaited<ReturnType<typeof next>>;
    },
    { step: 'initialize', name: MIDDLEWARE },
  );
});
afterAll(() => {
  secretsClient().middlewareStack.remove(MIDDLEWARE);
  process.env = { ...saved };
  resetForTests();
});
afterEach(() => {
  answers = {};
});

const usdcPayout = () => ({
  payoutId: `po_${randomUUID()}`,
  currency: 'USDC' as const,
  netAmount: 1_000_000,
  destination: Keypair.generate().publicKey.toBase58(),
});
const usdPayout = () => ({ payoutId: `po_${randomUUID()}`, currency: 'USD' as const, netAmount: 500, destination: 'agent@example.com' });

async function thrown(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Error)) throw new Error('expected the payout to throw');
  return error;
}

/** The error the worker logs: a RailConfigError naming the variable and the secret, so the alarm counts it. */
function expectOperatorError(error: Error, variable: string, arn: string): void {
  expect(error).toBeInstanceOf(RailConfigError);
  expect(OPERATOR_RAIL_ERRORS).toContain(error.name);
  expect(error.message).toContain(variable);
  expect(error.message).toContain(arn);
}

describe('a rail secret with no value', () => {
  const solanaEnv = {
    SOLANA_RPC_URL: 'http://127.0.0.1:1',
    USDC_MINT: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    SOLANA_HOT_WALLET_SECRET_ARN: HOT_WALLET_ARN,
  };

  it.each<[string, Answer]>([
    ['an empty value', { value: '' }],
    ['a blank value', { value: ' \n' }],
    ['no value yet (ResourceNotFoundException)', { error: noValueYet }],
  ])('hot wallet: %s is a RailConfigError naming SOLANA_HOT_WALLET_SECRET_ARN', async (_, answer) => {
    useEnv(solanaEnv);
    answers = { [HOT_WALLET_ARN]: answer };
    expectOperatorError(
      await thrown(railFor('USDC').pay(usdcPayout(), new MemoryCheckpoint())),
      'SOLANA_HOT_WALLET_SECRET_ARN',
      HOT_WALLET_ARN,
    );
  });

  it.each<[string, Answer]>([
    ['an empty value', { value: '' }],
    ['no value yet (ResourceNotFoundException)', { error: noValueYet }],
  ])('RPC URL: %s is a RailConfigError naming SOLANA_RPC_URL_SECRET_ARN', async (_, answer) => {
    useEnv({ ...solanaEnv, SOLANA_RPC_URL_SECRET_ARN: RPC_URL_ARN });
    delete process.env.SOLANA_RPC_URL;
    resetForTests();
    answers = { [RPC_URL_ARN]: answer };
    expectOperatorError(await thrown(railFor('USDC').pay(usdcPayout(), new MemoryCheckpoint())), 'SOLANA_RPC_URL_SECRET_ARN', RPC_URL_ARN);
  });

  it.each<[string, Answer]>([
    ['an empty value', { value: '' }],
    ['no value yet (ResourceNotFoundException)', { error: noValueYet }],
  ])('PayPal credentials: %s is a RailConfigError naming PAYPAL_CREDENTIALS_SECRET_ARN', async (_, answer) => {
    useEnv({ PAYPAL_BASE_URL: 'http://127.0.0.1:1', PAYPAL_CREDENTIALS_SECRET_ARN: PAYPAL_ARN });
    answers = { [PAYPAL_ARN]: answer };
    expectOperatorError(await thrown(railFor('USD').pay(usdPayout(), new MemoryCheckpoint())), 'PAYPAL_CREDENTIALS_SECRET_ARN', PAYPAL_ARN);
  });

  it('leaves a transient Secrets Manager failure as it is: retried, not an operator alarm', async () => {
    useEnv(solanaEnv);
    answers = { [HOT_WALLET_ARN]: { error: throttled } };
    const error = await thrown(railFor('USDC').pay(usdcPayout(), new MemoryCheckpoint()));
    expect(error.name).toBe('ThrottlingException');
    expect(OPERATOR_RAIL_ERRORS).not.toContain(error.name);
  });
});

describe('a rail secret with a value', () => {
  let chain: LocalSolana;
  beforeAll(async () => {
    chain = await startLocalSolana();
  });
  afterAll(async () => {
    await chain.stop();
  });

  it('pays through the RPC URL and hot wallet read from Secrets Manager, with the configured compute budget', async () => {
    useEnv({
      USDC_MINT: chain.mint,
      SOLANA_RPC_URL_SECRET_ARN: RPC_URL_ARN,
      SOLANA_HOT_WALLET_SECRET_ARN: HOT_WALLET_ARN,
      SOLANA_COMMITMENT: 'confirmed',
      SOLANA_PRIORITY_FEE_MICROLAMPORTS: '5000',
      SOLANA_COMPUTE_UNIT_LIMIT: '60000',
    });
    answers = { [RPC_URL_ARN]: { value: `${chain.url}\n` }, [HOT_WALLET_ARN]: { value: chain.hotWallet.secretKey } };
    const instruction = usdcPayout();
    chain.createTokenAccount(instruction.destination);
    const checkpoint = new MemoryCheckpoint();

    expect((await railFor('USDC').pay(instruction, checkpoint)).kind).toBe('completed');
    const [limit, price] = Transaction.from(Buffer.from(String(checkpoint.saved?.tx), 'base64')).instructions;
    expect(limit && ComputeBudgetInstruction.decodeSetComputeUnitLimit(limit).units).toBe(60_000);
    expect(price && ComputeBudgetInstruction.decodeSetComputeUnitPrice(price).microLamports).toBe(5_000n);
    expect(chain.tokenBalance(instruction.destination)).toBe(1_000_000n);
  });

  it('pays the next payout once an operator puts the empty hot-wallet secret, without a redeploy', async () => {
    useEnv({
      USDC_MINT: chain.mint,
      SOLANA_RPC_URL: chain.url,
      SOLANA_HOT_WALLET_SECRET_ARN: HOT_WALLET_ARN,
      SOLANA_COMMITMENT: 'confirmed',
    });
    const instruction = usdcPayout();
    chain.createTokenAccount(instruction.destination);
    answers = { [HOT_WALLET_ARN]: { value: '' } };
    const checkpoint = new MemoryCheckpoint();
    expectOperatorError(await thrown(railFor('USDC').pay(instruction, checkpoint)), 'SOLANA_HOT_WALLET_SECRET_ARN', HOT_WALLET_ARN);
    expect(checkpoint.saves).toHaveLength(0);

    answers = { [HOT_WALLET_ARN]: { value: chain.hotWallet.secretKey } };
    expect((await railFor('USDC').pay(instruction, checkpoint.redeliver())).kind).toBe('completed');
    expect(chain.tokenBalance(instruction.destination)).toBe(1_000_000n);
  });
});
