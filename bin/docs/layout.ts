/**
 * The map of the code (docs/layout.md), rendered from the folders themselves. Every folder of
 * functions/, lib/, bin/, scripts/ and test/ begins with a README.md: its first line is the folder's
 * path as a title (`# functions/store/`), the rest says what the folder holds, its rules and the
 * docs page of each part. The page is those READMEs in the order of the tree, each folder with its
 * number of files (its README aside), so it cannot miss a folder or keep one that went. Lines are
 * counted (readFolders) but not printed: a count that changes with every edit would make the page
 * stale on every commit, while files change only when the map should. Deterministic:
 * names are sorted by code unit, never by locale, and nothing but the tree's own text is read.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { generatedNotice, table } from './markdown';

/** The folders the map covers, each with every folder beneath it, in the order the page gives them. */
export const LAYOUT_ROOTS = ['functions', 'lib', 'bin', 'scripts', 'test'] as const;

/** The file that begins a folder: its text is the folder's entry in docs/layout.md. */
export const FOLDER_HEADER = 'README.md';

/** What the walk never enters: what .gitignore keeps out of the repository (and hidden entries). */
const SKIP = new Set(['node_modules', 'cdk.out', 'coverage', 'bench-results']);

export interface Folder {
  /** Relative to the repository, `/`-separated, no trailing slash (`functions/store`). */
  path: string;
  /** The folder's own files (not its sub-folders'), its README aside. */
  files: number;
  lines: number;
  /** Its README.md's text, or undefined when it has none. */
  header: string | undefined;
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Lines as an editor counts them: a last line without its newline is a line. */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n += 1;
  return text.endsWith('\n') ? n : n + 1;
}

/** Every folder under `roots` (each root first, then its sub-folders depth first), read from disk. */
export function readFolders(repoRoot: string, roots: readonly string[] = LAYOUT_ROOTS): Folder[] {
  const visit = (relative: string): Folder[] => {
    const dir = path.join(repoRoot, ...relative.split('/'));
    const entries = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => !entry.name.startsWith('.') && !SKIP.has(entry.name))
      .sort((a, b) => byCodeUnit(a.name, b.name));
    let files = 0;
    let lines = 0;
    for (const entry of entries) {
      if (!entry.isFile() || entry.name === FOLDER_HEADER) continue;
      files += 1;
      // latin1: one character per byte, so any file (text or not) counts its newline bytes.
      lines += lineCount(readFileSync(path.join(dir, entry.name), 'latin1'));
    }
    const headerFile = path.join(dir, FOLDER_HEADER);
    const header = existsSync(headerFile) ? readFileSync(headerFile, 'utf8') : undefined;
    const folder: Folder = { path: relative, files, lines, header };
    return [folder, ...entries.filter((entry) => entry.isDirectory()).flatMap((entry) => visit(`${relative}/${entry.name}`))];
  };
  return roots.filter((root) => existsSync(path.join(repoRoot, root))).flatMap(visit);
}

/** The title a folder's README starts with: its path, with a trailing slash. */
export const titleOf = (folder: string): string => `# ${folder}/`;

/** A README's text below its title line, trimmed. */
function bodyOf(header: string): string {
  return header.replace(/\r\n/g, '\n').split('\n').slice(1).join('\n').trim();
}

/** What keeps a folder off the map: no README.md, a title that is not its path, nothing under the title. */
export function headerProblems(folders: readonly Folder[]): string[] {
  return folders.flatMap((folder) => {
    const where = `${folder.path}/${FOLDER_HEADER}`;
    if (folder.header === undefined)
      return [`${folder.path}/: no ${FOLDER_HEADER} (its first line "${titleOf(folder.path)}", then what the folder holds)`];
    const first = folder.header.replace(/\r\n/g, '\n').split('\n')[0] ?? '';
    if (first.trim() !== titleOf(folder.path)) return [`${where}: its first line is "${first}", not "${titleOf(folder.path)}"`];
    if (bodyOf(folder.header) === '') return [`${where}: says nothing below its title`];
    return [];
  });
}

/** The anchor of a folder's section (`functions/kill-switch` → `functions-kill-switch`). */
export const anchorOf = (folder: string): string => folder.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase();

/**
 * A README's body as it reads inside docs/layout.md: relative links re-aimed from the folder to
 * docs/, and its headings pushed below the folder's own (`level`), outside code blocks.
 */
export function embed(body: string, folder: string, level: number): string {
  let fenced = false;
  return body
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return line;
      }
      if (fenced) return line;
      const heading = /^(#{1,6})(\s.*)$/.exec(line);
      const shifted = heading ? `${'#'.repeat(Math.min(6, (heading[1] ?? '').length + level - 1))}${heading[2]}` : line;
      return shifted.replace(/\]\(([^)\s]+)\)/g, (whole, target: string) => {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return whole;
        const [where = '', anchor] = target.split('#');
        const resolved = path.posix.normalize(where === '' ? `${folder}/${FOLDER_HEADER}` : `${folder}/${where}`);
        const fromDocs = path.posix.relative('docs', resolved);
        return `](${fromDocs}${anchor === undefined ? '' : `#${anchor}`})`;
      });
    })
    .join('\n');
}

/** docs/layout.md from the folders (their headers checked first: headerProblems). */
export function renderLayout(folders: readonly Folder[]): string {
  const anchors = new Set<string>();
  for (const folder of folders) {
    const anchor = anchorOf(folder.path);
    if (anchors.has(anchor)) throw new Error(`two folders share the anchor #${anchor}: ${folder.path}`);
    anchors.add(anchor);
  }
  const roots = folders.filter((folder) => !folder.path.includes('/')).map((folder) => `\`${folder.path}/\``);
  const rootList = `${roots.slice(0, -1).join(', ')} and ${roots.at(-1) ?? ''}`;
  const sections = folders.map((folder) => {
    const level = folder.path.includes('/') ? 3 : 2;
    const body = folder.header === undefined ? '' : embed(bodyOf(folder.header), folder.path, level);
    return [`<a id="${anchorOf(folder.path)}"></a>`, `${'#'.repeat(level)} ${folder.path}/`, '', body].join('\n');
  });
  return [
    '# Where the code is',
    '',
    generatedNotice(`each folder's ${FOLDER_HEADER} (bin/docs/layout.ts)`),
    '',
    "The repository's folders, each in its own words. Every folder of",
    `${rootList} begins with a \`${FOLDER_HEADER}\`:`,
    "its first line is the folder's path as a title, the rest says what the folder holds, its rules and",
    'the docs page of each part. This page is those files in the order of the tree, with the number of',
    `each folder's own files (its \`${FOLDER_HEADER}\` and sub-folders aside). To change an`,
    `entry, edit the folder's \`${FOLDER_HEADER}\` and run \`npm run docs\`; a new folder needs one.`,
    'test/docs/layout.test.ts fails when a folder has none, or when this page is stale. The docs are',
    'mapped by reader in [README.md](README.md).',
    '',
    table(
      ['Folder', 'Files'],
      folders.map((folder) => [`[${folder.path}/](#${anchorOf(folder.path)})`, String(folder.files)]),
    ),
    '',
    sections.join('\n\n'),
    '',
  ].join('\n');
}

/** docs/layout.md as `npm run docs` writes it, from the tree as it is on disk. */
export function layoutPage(repoRoot: string): { file: string; text: string; problems: string[] } {
  const folders = readFolders(repoRoot);
  return { file: path.join(repoRoot, 'docs', 'layout.md'), text: renderLayout(folders), problems: headerProblems(folders) };
}
