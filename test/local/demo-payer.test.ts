/**
 * `npm start`'s demo payer file (bin/local/demo.ts): with IN_MEMORY=1 each stack writes its own,
 * in a fresh folder under the system's temporary directory, never the project's .data/ (two
 * in-memory stacks on one machine used to overwrite each other's payer there).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readDemoPayerFile, writeDemoPayerFile } from '../../bin/local/demo';
import { PROJECT_ROOT } from '../../bin/local/dynamodb-local';

const payer = (n: number) => ({ publicKey: `pub${n}`, secretKey: `secret${n}`, rpcUrl: `http://127.0.0.1:${9000 + n}`, usdcMint: 'mint' });

describe('the demo payer file', () => {
  it('in memory: each stack writes its own under the temporary directory, not .data/, and removes it on stop', () => {
    const data = join(PROJECT_ROOT, '.data');
    const first = writeDemoPayerFile(payer(1), { inMemory: true, dataDir: data });
    const second = writeDemoPayerFile(payer(2), { inMemory: true, dataDir: data });
    try {
      expect(first.file).not.toBe(second.file);
      for (const written of [first, second]) {
        expect(written.file.startsWith(tmpdir())).toBe(true);
        expect(written.file.startsWith(data)).toBe(false);
        expect(statSync(written.file).mode & 0o777).toBe(0o600);
      }
      expect(JSON.parse(readFileSync(first.file, 'utf8'))).toEqual(payer(1));
      expect(JSON.parse(readFileSync(second.file, 'utf8'))).toEqual(payer(2));
    } finally {
      first.remove();
      second.remove();
    }
    expect(existsSync(dirname(first.file))).toBe(false);
    expect(existsSync(dirname(second.file))).toBe(false);
  });

  it('is read from DEMO_PAYER, else .data/; missing, the error says where an in-memory npm start put it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'demo-payer-test-'));
    try {
      const absent = join(dir, 'demo-payer.json');
      expect(() => readDemoPayerFile({}, absent)).toThrow(
        `no demo payer at ${absent}. npm start writes it there, except with IN_MEMORY=1: then it is in a temporary folder, ` +
          'shown on its "demo payer" line (keypair in …/demo-payer.json); pass that file as DEMO_PAYER=<file>.',
      );
      expect(() => readDemoPayerFile({ DEMO_PAYER: absent }, absent)).toThrow(/^no demo payer at DEMO_PAYER=.*"demo payer" line/);
      const written = writeDemoPayerFile(payer(4), { inMemory: true, dataDir: dir });
      try {
        expect(readDemoPayerFile({ DEMO_PAYER: written.file }, absent)).toEqual({ file: written.file, payer: payer(4) });
      } finally {
        written.remove();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('persistent: beside the chain it pays on, kept after stop', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'demo-payer-test-'));
    try {
      const written = writeDemoPayerFile(payer(3), { inMemory: false, dataDir });
      expect(written.file).toBe(join(dataDir, 'demo-payer.json'));
      written.remove();
      expect(JSON.parse(readFileSync(written.file, 'utf8'))).toEqual(payer(3));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
