import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { ConfigurationError, config, resetForTests } from '../../functions/config';
import { destinationProblem } from '../../functions/core/withdrawals';
import { OPERATOR_RAIL_ERRORS } from '../../functions/observability/metric-names';
import { railFor } from '../../functions/rails';
import { PlatformFundsError, RailAmbiguousAnswerError, RailConfigError } from '../../functions/rails/errors';
import { centsToDecimal, PaypalRail } from '../../functions/rails/paypal.rail';
import { parseSecretKey, priorityFeeLamports, SolanaRail, walletAddress } from '../../functions/rails/solana.rail';
import { MemoryCheckpoint } from './checkpoint';

describe('walletAddress', () => {
  it('accepts a wallet (on-curve) address', () => {
    const key = Keypair.generate().publicKey;
    expect(walletAddress(key.toBase58())?.equals(key)).toBe(true);
  });

  it('refuses garbage, wrong lengths and off-curve addresses unless asked to allow them', () => {
    expect(walletAddress('0OIl')).toBeUndefined();
    expect(walletAddress(bs58.encode(Buffer.alloc(31, 1)))).toBeUndefined();
    // A program-derived address (e.g. a token account) is off the curve by construction.
    const [pda] = PublicKey.findProgramAddressSync([Buffer.from('x')], Keypair.generate().publicKey);
    expect(walletAddress(pda.toBase58())).toBeUndefined();
    expect(walletAddress(pda.toBase58(), false)?.toBase58()).toBe(pda.toBase58());
  });
});

describe('parseSecretKey', () => {
  const keypair = Keypair.generate();

  it('reads base58 and the Solana CLI JSON byte array', () => {
    expect(parseSecretKey(bs58.encode(keypair.secretKey)).publicKey.equals(keypair.publicKey)).toBe(true);
    expect(parseSecretKey(` ${JSON.stringify([...keypair.secretKey])}\n`).publicKey.equals(keypair.publicKey)).toBe(true);
  });

  it('refuses malformed secrets without ever quoting them', () => {
    const secretish = `[${[...keypair.secretKey].slice(0, 10).join(',')},oops`;
    for (const bad of [secretish, 'not-base58-0OIl', bs58.encode(keypair.secretKey.slice(0, 32)), JSON.stringify([...Array(64).keys()])]) {
      let caught: unknown;
      try {
        parseSecretKey(bad);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RailConfigError);
      expect(String((caught as Error).message)).not.toContain(bad.slice(1, 12));
    }
  });
});

describe('PayPal helpers', () => {
  it('formats cents with exactly two decimals', () => {
    expect([971, 970, 100, 5, 123456789].map(centsToDecimal)).toEqual(['9.71', '9.70', '1.00', '0.05', '1234567.89']);
  });
});

describe('PayPal receiver check', () => {
  /** Reached only when the rail accepted the receiver: loading credentials is its first step after that. */
  class PastValidation extends Error {}
  const rail = new PaypalRail({
    credentials: async () => {
      throw new PastValidation();
    },
  });
  const refusedByRail = async (destination: string): Promise<boolean> => {
    try {
      const outcome = await rail.pay(
        { payoutId: 'po_receiver_check', currency: 'USD', netAmount: 971, destination },
        new MemoryCheckpoint(),
      );
      expect(outcome).toEqual({ kind: 'failed', reason: 'invalid paypal account' });
      return true;
    } catch (error) {
      if (error instanceof PastValidation) return false;
      throw error;
    }
  };

  it('refuses exactly the destinations a withdraw request refuses', async () => {
    for (const destination of [
      'dev@example.com',
      'first.last+tag@sub.example.co.uk',
      'N8HQ3A6WXZ2PL',
      'n8hq3a6wxz2pl',
      'N8HQ3A6WXZ2P',
      'dev@example',
      'a b@example.com',
      '',
      // The rail used to take up to 254 characters; the Payouts API takes 127.
      `${'a'.repeat(120)}@example.com`,
      Keypair.generate().publicKey.toBase58(),
    ]) {
      expect([destination, await refusedByRail(destination)]).toEqual([destination, destinationProblem('USD', destination) !== undefined]);
    }
  });

  it('agrees with the withdraw request on arbitrary text', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.emailAddress(), fc.string(), fc.stringMatching(/^[A-Za-z0-9]{12,14}$/)), async (destination) => {
        expect(await refusedByRail(destination)).toBe(destinationProblem('USD', destination) !== undefined);
      }),
      { numRuns: 300 },
    );
  });
});

describe('railFor', () => {
  afterEach(() => resetForTests());

  it('gives the Solana rail for USDC and the PayPal rail for USD, built once', () => {
    expect(railFor('USDC')).toBeInstanceOf(SolanaRail);
    expect(railFor('USD')).toBeInstanceOf(PaypalRail);
    expect(railFor('USDC')).toBe(railFor('USDC'));
    expect(railFor('USD')).toBe(railFor('USD'));
  });

  it('builds new rails after resetForTests', () => {
    const before = railFor('USD');
    resetForTests();
    expect(railFor('USD')).not.toBe(before);
  });
});

describe('operator alarm', () => {
  it('counts every rail error that waits for an operator, by the name the worker logs', () => {
    const names = [new PlatformFundsError('x'), new RailConfigError('x'), new RailAmbiguousAnswerError('x')].map((e) => e.name);
    expect([...OPERATOR_RAIL_ERRORS].sort()).toEqual(names.sort());
  });
});

describe('Solana fee configuration', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    resetForTests();
  });
  const parse = (env: Record<string, string>) => {
    Object.assign(process.env, env);
    resetForTests();
    return config();
  };

  it('defaults to 10,000 micro-lamports per unit on a 40,000-unit limit: a 400-lamport priority fee', () => {
    delete process.env.SOLANA_PRIORITY_FEE_MICROLAMPORTS;
    delete process.env.SOLANA_COMPUTE_UNIT_LIMIT;
    const cfg = parse({});
    expect([cfg.SOLANA_PRIORITY_FEE_MICROLAMPORTS, cfg.SOLANA_COMPUTE_UNIT_LIMIT]).toEqual([10_000, 40_000]);
    expect(priorityFeeLamports(cfg.SOLANA_COMPUTE_UNIT_LIMIT, cfg.SOLANA_PRIORITY_FEE_MICROLAMPORTS)).toBe(400);
  });

  it('refuses a priority fee above the cap at config parse, naming the variable', () => {
    expect(parse({ SOLANA_PRIORITY_FEE_MICROLAMPORTS: '1000000' }).SOLANA_PRIORITY_FEE_MICROLAMPORTS).toBe(1_000_000);
    expect(() => parse({ SOLANA_PRIORITY_FEE_MICROLAMPORTS: '1000001' })).toThrow(ConfigurationError);
    expect(() => parse({ SOLANA_PRIORITY_FEE_MICROLAMPORTS: '1000001' })).toThrow(/SOLANA_PRIORITY_FEE_MICROLAMPORTS/);
  });

  it('refuses a negative or fractional price and a compute-unit limit outside 1,000..200,000', () => {
    for (const env of [
      { SOLANA_PRIORITY_FEE_MICROLAMPORTS: '-1' } as Record<string, string>,
      { SOLANA_PRIORITY_FEE_MICROLAMPORTS: '1.5' },
      { SOLANA_COMPUTE_UNIT_LIMIT: '999' },
      { SOLANA_COMPUTE_UNIT_LIMIT: '200001' },
    ]) {
      expect(() => parse(env)).toThrow(ConfigurationError);
      process.env = { ...saved };
    }
  });

  it('rounds the priority fee up to whole lamports, as the runtime charges it', () => {
    expect(priorityFeeLamports(40_000, 1)).toBe(1);
    expect(priorityFeeLamports(40_000, 0)).toBe(0);
    expect(priorityFeeLamports(200_000, 1_000_000)).toBe(200_000);
  });
});
