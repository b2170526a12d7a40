import { randomBytes } from 'node:crypto';
import { getAssociatedTokenAddressSync } from '@solana/spl-token';
import { PublicKey } from '@solana/web3.js';
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
    expect(destinationProblem('USDC', ata.toBase58())).toBe('invalid solana address');
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

describe('PayPal destination', () => {
  it('accepts an e-mail address or a 13-character payer id', () => {
    expect(paypalReceiverType('agent@example.com')).toBe('EMAIL');
    expect(paypalReceiverType('first.last+tag@sub.example.co.uk')).toBe('EMAIL');
    expect(paypalReceiverType('ABCDEFGH23456')).toBe('PAYPAL_ID');
    expect(destinationProblem('USD', 'agent@example.com')).toBeUndefined();
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
      expect(destinationProblem('USD', bad)).toBe('invalid paypal account');
    }
  });

  it('does not take a Solana address for a PayPal account, nor the reverse', () => {
    expect(destinationProblem('USD', solanaWallet())).toBe('invalid paypal account');
    expect(destinationProblem('USDC', 'agent@example.com')).toBe('invalid solana address');
  });
});

it('pays USDC on Solana and USD through PayPal', () => {
  expect(NETWORK_OF).toEqual({ USDC: 'SOL', USD: 'PAYPAL' });
});
