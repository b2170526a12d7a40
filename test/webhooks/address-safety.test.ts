/** The SSRF rule (core/webhooks.ts) and the registration check, on AWS settings (no loopback). */

import { isAllowedAddress, webhookUrlProblem } from '../../functions/core/webhooks';
import { checkEndpointUrl } from '../../functions/net/address-check';

const aws = { allowLoopback: false };
const local = { allowLoopback: true };

describe('isAllowedAddress on AWS', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '2606:4700:4700::1111',
    '2a00:1450:4001:80b::200e',
  ])('allows the public address %s', (ip) => {
    expect(isAllowedAddress(ip, aws)).toBe(true);
  });

  it.each([
    ['loopback', '127.0.0.1'],
    ['loopback range', '127.8.9.10'],
    ['this network', '0.0.0.0'],
    ['private 10/8', '10.1.2.3'],
    ['private 172.16/12', '172.31.255.255'],
    ['private 192.168/16', '192.168.0.1'],
    ['link-local (cloud metadata)', '169.254.169.254'],
    ['CGNAT', '100.64.0.1'],
    ['benchmarking', '198.18.0.1'],
    ['documentation', '203.0.113.9'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unspecified', '::'],
    ['IPv6 unique local', 'fd12:3456::1'],
    ['IPv6 unique local (fc)', 'fc00::1'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 link-local with zone', 'fe80::1%eth0'],
    ['IPv6 site-local', 'fec0::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['IPv4-mapped private', '::ffff:10.0.0.1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['IPv4-mapped public (hex form)', '::ffff:808:808'],
    ['IPv4-compatible', '::10.0.0.1'],
    ['NAT64', '64:ff9b::a00:1'],
    ['6to4', '2002:a00:1::1'],
    ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
    ['IPv6 documentation', '2001:db8::1'],
    ['not an address', 'example.com'],
  ])('refuses %s (%s)', (_what, ip) => {
    expect(isAllowedAddress(ip, aws)).toBe(false);
  });

  it('allows loopback only with the local flag, and nothing private even then', () => {
    expect(isAllowedAddress('127.0.0.1', local)).toBe(true);
    expect(isAllowedAddress('::1', local)).toBe(true);
    expect(isAllowedAddress('10.0.0.1', local)).toBe(false);
    expect(isAllowedAddress('169.254.169.254', local)).toBe(false);
  });
});

/** The text of the refusal webhookUrlProblem gives, if any. */
const urlProblem = (...args: Parameters<typeof webhookUrlProblem>) => webhookUrlProblem(...args)?.message;

describe('webhookUrlProblem', () => {
  it('wants https on AWS, and lets http reach loopback only locally', () => {
    expect(urlProblem('https://hooks.example.com/x', aws)).toBeUndefined();
    expect(urlProblem('http://hooks.example.com/x', aws)).toBe('url must be an https URL');
    expect(urlProblem('http://127.0.0.1:8080/x', aws)).toBe('url must be an https URL');
    expect(urlProblem('https://127.0.0.1/x', aws)).toBe('url must resolve to a public address');
    expect(urlProblem('https://localhost/x', aws)).toBe('url must resolve to a public address');
    expect(urlProblem('http://127.0.0.1:8080/x', local)).toBeUndefined();
    expect(urlProblem('http://localhost:8080/x', local)).toBeUndefined();
    expect(urlProblem('http://[::1]:8080/x', local)).toBeUndefined();
    expect(urlProblem('http://10.0.0.1/x', local)).toBe('url must be an https URL (or http://127.0.0.1 locally)');
  });

  it('refuses credentials, fragments, non-URLs and overlong URLs', () => {
    expect(urlProblem('https://u:p@hooks.example.com/', aws)).toBe('url must not contain credentials');
    expect(urlProblem('https://hooks.example.com/#frag', aws)).toBe('url must not contain a fragment');
    expect(urlProblem('not a url', aws)).toBe('url must be a valid https URL');
    expect(urlProblem(`https://hooks.example.com/${'a'.repeat(2048)}`, aws)).toBe('url must be at most 2048 characters');
  });

  it('catches private addresses written in other notations', () => {
    // WHATWG URL parsing normalises these to dotted IPv4, which the rule then refuses.
    expect(urlProblem('https://0x7f000001/x', aws)).toBe('url must resolve to a public address');
    expect(urlProblem('https://2130706433/x', aws)).toBe('url must resolve to a public address');
    expect(urlProblem('https://[::ffff:169.254.169.254]/x', aws)).toBe('url must resolve to a public address');
  });
});

describe('checkEndpointUrl (registration)', () => {
  it('refuses a host name that resolves to any private address', async () => {
    const resolver = async () => ['93.184.216.34', '10.0.0.5'];
    await expect(checkEndpointUrl('https://rebind.example.com/x', aws, resolver)).rejects.toThrow('url must resolve to a public address');
  });

  it('refuses a host that does not resolve, and accepts one that resolves publicly', async () => {
    await expect(
      checkEndpointUrl('https://nowhere.example.com/x', aws, async () => {
        throw new Error('ENOTFOUND');
      }),
    ).rejects.toThrow('url host does not resolve');
    await expect(checkEndpointUrl('https://hooks.example.com/x', aws, async () => ['93.184.216.34'])).resolves.toBeInstanceOf(URL);
  });
});
