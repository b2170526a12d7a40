import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Keypair, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { destinationProblem, isSolanaWalletAddress, NETWORK_OF, paypalReceiverType } from '../../functions/core/withdrawals';
import { solanaWallet } from '../support/payouts';

const USDC_MINT = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');

describe('Solana destination', () => {
  it('accepts wallet addresses (ed25519 public keys)', () => {
    for (let i = 0; i < 20; i++) expect(isSolanaWalletAddress(solanaWallet())).toBe(true);
    expect(isSolanaWalletAddress('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM')).toBe(true);
  });

  it('rejects a token account pasted instead of the wallet (off the curve)', () => {
    const ata = getAssociatedTokenAddressSync(USDC_MINT, new PublicKey(solanaWallet()));
    expect(isSolanaWalletAddress(ata.toBase58())).toBe(false);
    expect(destinationProblem('USDC', ata.toBase58())?.message).toBe('invalid solana address');
  });

  it('rejects text that is not base58 of exactly 32 bytes', () => {
    const wallet = solanaWallet();
    for (const bad of [
      '',
      'hello',
      `${wallet}${wallet}`,
      '1'.repeat(33),
      wallet.replace(/.$/, '0'),
      `0${wallet.slice(1)}`,
      bs58.encode(randomBytes(31)),
      bs58.encode(randomBytes(33)),
      ` ${wallet}`,
    ]) {
      expect(isSolanaWalletAddress(bad)).toBe(false);
    }
  });

  it('agrees with web3.js PublicKey.isOnCurve on any 32 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        expect(isSolanaWalletAddress(bs58.encode(bytes))).toBe(PublicKey.isOnCurve(bytes));
      }),
      { numRuns: 500 },
    );
  });
});

describe('Solana destination: keys no wallet can hold', () => {
  /**
   * The 8 small-order (torsion) points: the multiples of a point of order 8 (its encoding is the
   * well-known 26e8958f… from the ed25519 small-order blocklists), identity included.
   */
  const torsionPoints = (() => {
    const order8 = ed25519.Point.fromHex('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05');
    const all: string[] = [];
    let p = ed25519.Point.ZERO;
    for (let k = 0; k < 8; k++, p = p.add(order8)) all.push(bs58.encode(p.toBytes()));
    return all;
  })();

  it('refuses all 8 small-order points (the identity and the System Program id among them)', () => {
    expect(new Set(torsionPoints).size).toBe(8);
    expect(torsionPoints).toContain(bs58.encode(ed25519.Point.ZERO.toBytes())); // the identity
    expect(torsionPoints).toContain('11111111111111111111111111111111'); // all-zero bytes
    for (const address of torsionPoints) {
      expect([address, PublicKey.isOnCurve(new PublicKey(address).toBytes())]).toEqual([address, true]); // passes the old check
      expect([address, destinationProblem('USDC', address)?.message]).toEqual([address, 'invalid solana address']);
    }
  });

  it.each([
    ['System Program', '11111111111111111111111111111111'],
    ['SPL Token', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
    ['SPL Token-2022', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb'],
    ['Associated Token Account', 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL'],
    ['SPL Memo', 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr'],
    ['Compute Budget', 'ComputeBudget111111111111111111111111111111'],
    ['Rent sysvar', 'SysvarRent111111111111111111111111111111111'],
    ['Clock sysvar', 'SysvarC1ock11111111111111111111111111111111'],
    ['wrapped SOL mint', 'So11111111111111111111111111111111111111112'],
    ['USDC mint', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'],
  ])('refuses the %s id', (_, address) => {
    expect(destinationProblem('USDC', address)?.message).toBe('invalid solana address');
  });

  it('refuses the addresses the caller denies (the configured mint, the hot wallet), and only those', () => {
    const mint = Keypair.generate().publicKey.toBase58();
    const hotWallet = Keypair.generate().publicKey.toBase58();
    const denied = { denied: [mint, hotWallet, undefined] };
    expect(destinationProblem('USDC', mint)?.message).toBeUndefined(); // a curve point like any wallet
    expect(destinationProblem('USDC', mint, denied)?.message).toBe('invalid solana address');
    expect(destinationProblem('USDC', hotWallet, denied)?.message).toBe('invalid solana address');
    expect(destinationProblem('USDC', solanaWallet(), denied)?.message).toBeUndefined();
    expect(destinationProblem('USD', 'agent@example.com', denied)?.message).toBeUndefined();
  });
});

describe('PayPal destination', () => {
  it('accepts an e-mail address or a 13-character payer id', () => {
    expect(paypalReceiverType('agent@example.com')).toBe('EMAIL');
    expect(paypalReceiverType('first.last+tag@sub.example.co.uk')).toBe('EMAIL');
    expect(paypalReceiverType('ABCDEFGH23456')).toBe('PAYPAL_ID');
    expect(destinationProblem('USD', 'agent@example.com')?.message).toBeUndefined();
  });

  it('rejects anything else', () => {
    for (const bad of [
      '',
      'agent',
      'agent@',
      '@example.com',
      'a b@example.com',
      'abcdefgh23456',
      'ABCDEFGH2345',
      'ABCDEFGH234567',
      `${'a'.repeat(120)}@example.com`,
    ]) {
      expect(paypalReceiverType(bad)).toBeUndefined();
      expect(destinationProblem('USD', bad)?.message).toBe('invalid paypal account');
    }
  });

  it('does not take a Solana address for a PayPal account, nor the reverse', () => {
    expect(destinationProblem('USD', solanaWallet())?.message).toBe('invalid paypal account');
    expect(destinationProblem('USDC', 'agent@example.com')?.message).toBe('invalid solana address');
  });
});

it('pays USDC on Solana and USD through PayPal', () => {
  expect(NETWORK_OF).toEqual({ USDC: 'SOL', USD: 'PAYPAL' });
});
