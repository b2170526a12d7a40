/**
 * package.json's `engines` says what the installed packages need, no more and no less, and the
 * README, docs/getting-started.md and CI say the same (issue 38: the README said "20.6+" while 29
 * packages wanted more, and `npm install` printed ~220 warning lines).
 *
 * semver: npm's own range logic, already installed (Jest's coverage tooling depends on it), not a
 * dependency of ours.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const semver = require('semver') as { satisfies(version: string, range: string): boolean };

const ROOT = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[]; optional?: boolean; os?: string[] }>;
};

/** Every installed package's Node range (platform-only optionals never install here). */
const ranges = Object.entries(lock.packages).flatMap(([location, entry]) => {
  const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
  if (location === '' || node === undefined || (entry.optional && entry.os)) return [];
  return [{ name: `${location.replace(/^.*node_modules\//, '')}@${entry.version}`, node }];
});
const refusing = (version: string) => ranges.filter((r) => !semver.satisfies(version, r.node)).map((r) => r.name);

describe('engines', () => {
  it('is ^20.19.0 || >=22.12.0', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
  });

  it.each(['20.19.0', '20.20.2', '22.12.0', '22.17.0', '24.0.0', '24.11.0'])('every installed package runs on Node %s', (version) => {
    expect(semver.satisfies(version, pkg.engines.node)).toBe(true);
    expect(refusing(version)).toEqual([]);
  });

  it.each(['20.18.0', '22.11.0'])('is no wider than the packages: Node %s is refused by some', (version) => {
    expect(semver.satisfies(version, pkg.engines.node)).toBe(false);
    expect(refusing(version).length).toBeGreaterThan(0);
  });

  it('is what the README and getting started say, and CI tests Node 20 and Lambda 24', () => {
    for (const page of ['README.md', 'docs/getting-started.md']) {
      const text = read(page).replace(/\s+/g, ' ');
      expect([page, text]).toEqual([page, expect.stringContaining('Needs Node.js 24 (what Lambda runs), 22.12+')]);
      expect([page, text]).toEqual([page, expect.stringContaining('20.19+')]);
      expect(text).not.toContain('20.6+');
    }
    expect(read('.github/workflows/ci.yml')).toMatch(/node: \[20, 24\]/);
    expect(read('lib/service-function.ts')).toContain('NODEJS_24_X');
  });
});
