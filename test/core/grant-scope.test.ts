/**
 * A grant's scope, the pure rules (core/grant-scope.ts; docs/grants.md "Scope"): how a host entry
 * is normalised or refused, what a wildcard matches, and that payees compare as the bytes they
 * decode to. The API's side, end to end: test/security/grant-scope.e2e.test.ts.
 */
import bs58 from 'bs58';
import { checkPayeeEntry, hostAllowed, normaliseHostEntry, payeeAllowed, scopeRefusal } from '../../functions/core/grant-scope';

const KEY = new Uint8Array(32).map((_, i) => i + 1);
const ADDRESS = bs58.encode(KEY);

describe('host entries', () => {
  it.each([
    ['API.Example.COM.', 'api.example.com'],
    ['api.example.com', 'api.example.com'],
    ['*.Example.com', '*.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['*.bücher.example.', '*.xn--bcher-kva.example'],
  ])('%s is stored as %s', (entry, host) => {
    expect(normaliseHostEntry(entry)).toEqual({ host });
  });

  it.each([
    ['api.example.com:443', 'port'],
    ['user@api.example.com', 'userinfo'],
    ['api.example.com/path', 'path'],
    ['api.example.com?q', 'path'],
    ['api .example.com', 'spaces'],
    [' api.example.com', 'spaces'],
    ['1.2.3.4', 'ip'],
    ['0x7f.1', 'ip'],
    ['[::1]', 'ip'],
    ['*.com', 'wildcard'],
    ['a.*.example.com', 'wildcard'],
    ['*example.com', 'wildcard'],
    ['', 'format'],
    ['a..b', 'format'],
    ['.', 'format'],
  ])('%s is refused (%s)', (entry, problem) => {
    expect(normaliseHostEntry(entry)).toEqual({ problem });
  });
});

describe('host matching', () => {
  const hosts = ['api.example.com', '*.shop.example'];
  it.each([
    ['https://api.example.com/x', true],
    ['https://API.EXAMPLE.COM./x', true],
    ['https://api.example.com:8443/x', true],
    ['https://user:pw@api.example.com/x', true],
    ['https://api.example.com@evil.com/', false],
    ['https://evil.com/?api.example.com', false],
    ['https://a.shop.example/x', true],
    ['https://a.b.shop.example/x', true],
    ['https://shop.example/x', false],
    ['https://evilshop.example/x', false],
    ['https://api.example.com.evil.com/', false],
    ['not a url', false],
  ])('%s → %s', (url, allowed) => {
    expect(hostAllowed(hosts, url)).toBe(allowed);
  });
});

describe('payees', () => {
  it('takes only the canonical base58 of 32 bytes', () => {
    expect(checkPayeeEntry(ADDRESS)).toEqual({ payee: ADDRESS });
    expect(checkPayeeEntry(Buffer.from(KEY).toString('hex'))).toEqual({ problem: 'address' });
    expect(checkPayeeEntry(` ${ADDRESS}`)).toEqual({ problem: 'address' });
    expect(checkPayeeEntry(`1${ADDRESS}`)).toEqual({ problem: 'address' });
  });

  it('compares decoded bytes: another case is another key', () => {
    expect(payeeAllowed([ADDRESS], ADDRESS)).toBe(true);
    const swapped = [...ADDRESS].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
    expect(payeeAllowed([ADDRESS], swapped)).toBe(false);
    expect(payeeAllowed([ADDRESS], Buffer.from(KEY).toString('hex'))).toBe(false);
  });
});

describe('the refusal', () => {
  const purchase = { payTo: ADDRESS, resourceUrl: 'https://api.example.com/x' };
  it('payees first, then hosts; a plain charge under any scope is refused', () => {
    expect(scopeRefusal(undefined, undefined)).toBeUndefined();
    expect(scopeRefusal({ payees: [ADDRESS], hosts: ['api.example.com'] }, purchase)).toBeUndefined();
    expect(scopeRefusal({ payees: [bs58.encode(new Uint8Array(32))], hosts: ['other.example'] }, purchase)).toBe('payeeNotAllowedByGrant');
    expect(scopeRefusal({ hosts: ['other.example'] }, purchase)).toBe('hostNotAllowedByGrant');
    expect(scopeRefusal({ hosts: ['api.example.com'] }, { ...purchase, resourceUrl: null })).toBe('hostNotAllowedByGrant');
    expect(scopeRefusal({ payees: [ADDRESS] }, undefined)).toBe('payeeNotAllowedByGrant');
    expect(scopeRefusal({ hosts: ['api.example.com'] }, undefined)).toBe('hostNotAllowedByGrant');
  });
});
