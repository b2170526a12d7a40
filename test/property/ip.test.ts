/**
 * core/ip.ts `ipFamily` answers exactly as Node's `net.isIP`, which core/ no longer imports (core
 * does no I/O and imports no network module: test/architecture/layers.test.ts). The webhook
 * address rules (core/webhooks.ts) read every literal address through it.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { ipFamily } from '../../functions/core/ip';

/** Text that looks like an address: digits, hex, dots, colons, a zone id, brackets. */
const addressish = fc
  .array(fc.constantFrom(...'0123456789abcdefABCDEF.:%[]-xz '.split('')), { maxLength: 45 })
  .map((chars) => chars.join(''));

/** An address with one character dropped, doubled or swapped for a near miss. */
const mangled = fc
  .tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), fc.nat(), fc.constantFrom('', '.', ':', '::', '0', 'f', 'g', '%eth0', '256'))
  .map(([ip, at, insert]) => {
    const i = at % (ip.length + 1);
    return ip.slice(0, i) + insert + ip.slice(i + (insert === '' ? 1 : 0));
  });

describe('ipFamily (properties)', () => {
  it('is net.isIP on every generated IPv4 and IPv6 address, with or without a zone id', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.ipV4(),
          fc.ipV6(),
          fc.ipV6().map((ip) => `${ip}%eth0`),
        ),
        (ip) => {
          expect(ipFamily(ip)).toBe(isIP(ip));
        },
      ),
      { numRuns: 5000 },
    );
  });

  it('is net.isIP on near misses, address-like text and any text', () => {
    fc.assert(
      fc.property(fc.oneof(mangled, addressish, fc.ipV4Extended(), fc.string(), fc.domain()), (text) => {
        expect(ipFamily(text)).toBe(isIP(text));
      }),
      { numRuns: 10_000 },
    );
  });

  it('answers the families of the addresses the webhook rules name', () => {
    for (const [text, family] of [
      ['127.0.0.1', 4],
      ['169.254.169.254', 4],
      ['::1', 6],
      ['::ffff:169.254.169.254', 6],
      ['fe80::1%eth0', 6],
      ['0x7f000001', 0],
      ['2130706433', 0],
      ['localhost', 0],
      ['[::1]', 0],
      ['', 0],
    ] as const) {
      expect([text, ipFamily(text)]).toEqual([text, family]);
      expect(isIP(text)).toBe(family);
    }
  });
});
