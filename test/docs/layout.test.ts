/**
 * The map of the code (docs/layout.md) is generated from each folder's README.md (bin/docs/layout.ts):
 * every folder of functions/, lib/, bin/, scripts/ and test/ has one, titled with its path, and the
 * committed page is what `npm run docs` writes from them. Stale or headless, it fails here, in the
 * unit tier; the walk itself is held to a tree made here, so the checks can fail.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { embed, headerProblems, layoutPage, lineCount, readFolders, renderLayout } from '../../bin/docs/layout';

const ROOT = path.resolve(__dirname, '..', '..');

describe('the map of the code (docs/layout.md)', () => {
  const page = layoutPage(ROOT);

  it('every folder of functions/, lib/, bin/, scripts/ and test/ begins with its README.md, titled with its path', () => {
    expect(page.problems).toEqual([]);
  });

  it('is what `npm run docs` generates from them', () => {
    expect(readFileSync(page.file, 'utf8')).toBe(page.text);
  });

  it('lists every folder, those the hand-kept page missed included', () => {
    const folders = readFolders(ROOT).map((folder) => folder.path);
    expect(folders.length).toBeGreaterThan(70);
    for (const folder of [
      'functions/console/pages',
      'functions/messages',
      'functions/net',
      'functions/x402',
      'bin/operator',
      'lib/shims',
      'test/security',
    ]) {
      expect(folders).toContain(folder);
      expect(page.text).toContain(`### ${folder}/\n`);
    }
  });
});

describe('the walk and the page (bin/docs/layout.ts), on a tree of its own', () => {
  let root: string;
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  };

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'layout-'));
    write(
      'functions/README.md',
      '# functions/\n\nThe service.\n\n## Layers\n\nSee [the store](store/README.md) and [money](../guide/money.md#exact).\n',
    );
    write('functions/config.ts', 'a\nb\n');
    write('functions/store/README.md', '# functions/store/\n\nRepositories.\n');
    write('functions/store/b.ts', 'one\ntwo\nthree');
    write('functions/store/a.ts', '');
    write('functions/store/.hidden', 'x\n');
    write('functions/core/x.ts', 'x\n');
    write('functions/node_modules/y.ts', 'y\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads every folder in code-unit order, counting its own files and lines, its README and hidden entries aside', () => {
    const folders = readFolders(root, ['functions']);
    expect(folders.map(({ path: p, files, lines }) => [p, files, lines])).toEqual([
      ['functions', 1, 2],
      ['functions/core', 1, 1],
      ['functions/store', 2, 3],
    ]);
  });

  it('refuses a folder without a README, and a README whose title is not its path', () => {
    write('functions/store/README.md', '# functions/storage/\n\nRepositories.\n');
    expect(headerProblems(readFolders(root, ['functions']))).toEqual([
      'functions/core/: no README.md (its first line "# functions/core/", then what the folder holds)',
      'functions/store/README.md: its first line is "# functions/storage/", not "# functions/store/"',
    ]);
    write('functions/core/README.md', '# functions/core/\n\n');
    expect(headerProblems(readFolders(root, ['functions']))).toContain('functions/core/README.md: says nothing below its title');
  });

  it('renders each README below its folder, its links aimed from docs/ and its headings below the folder', () => {
    write('functions/core/README.md', '# functions/core/\n\nThe domain.\n');
    const text = renderLayout(readFolders(root, ['functions']));
    expect(text).toContain('| [functions/store/](#functions-store) | 2 |');
    expect(text).toContain('<a id="functions"></a>\n## functions/\n\nThe service.\n\n### Layers\n');
    expect(text).toContain('See [the store](../functions/store/README.md) and [money](../guide/money.md#exact).');
    expect(text).toContain('<a id="functions-store"></a>\n### functions/store/\n\nRepositories.');
    expect(renderLayout(readFolders(root, ['functions']))).toBe(text);
  });

  it('counts lines as an editor does, and leaves code blocks and addresses alone', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('\n\n')]).toEqual([0, 1, 1, 2, 2]);
    // An anchor of the README itself is aimed at the README (its name spelled apart: links.test.ts reads `README.md#…` as the root's).
    const header = ['README', 'md'].join('.');
    expect(embed('```\n# not a heading [x](y.md)\n```\n[site](https://example.com) [here](#top)', 'lib', 2)).toBe(
      `\`\`\`\n# not a heading [x](y.md)\n\`\`\`\n[site](https://example.com) [here](../lib/${header}#top)`,
    );
  });
});
