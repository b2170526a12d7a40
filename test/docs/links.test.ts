/**
 * The docs hold together: every relative link of README.md and docs/ reaches a file and, with a
 * `#anchor`, a heading or anchor of it; every place that names a docs page in the code, its
 * comments, tests and workflows (`docs/deploy.md "Admin access"`, `docs/x402.md#finality`,
 * `README "Endpoints"`) names one that exists, and the section it quotes; the README stays a map.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { slug } from '../../bin/docs/markdown';

const ROOT = path.resolve(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'cdk.out', '.cache', '.data', 'bench-results', '.git', 'coverage']);
const TEXT = /\.(ts|js|mjs|cjs|md|ya?ml|json)$/;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return walk(full);
    return TEXT.test(entry.name) && entry.name !== 'package-lock.json' ? [full] : [];
  });
}

const FILES = [
  ...['README.md', 'package.json', 'cdk.json'].map((f) => path.join(ROOT, f)),
  ...['docs', 'functions', 'lib', 'bin', 'test', 'scripts', '.github', '.ci'].flatMap((d) => walk(path.join(ROOT, d))),
].filter((f) => existsSync(f));
const MARKDOWN = FILES.filter((f) => f.endsWith('.md'));
const rel = (file: string) => path.relative(ROOT, file);

/** A Markdown file's text with fenced code blocks blanked (links in examples are not links). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

interface Targets {
  anchors: Set<string>;
  /** Headings, bold labels that open a paragraph or item, and first table cells, lower-cased: what a quoted section name may name. */
  labels: string[];
}

const targetCache = new Map<string, Targets>();
function targetsOf(file: string): Targets {
  const cached = targetCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const labels: string[] = [];
  const seen = new Map<string, number>();
  for (const line of prose(readFileSync(file, 'utf8')).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading?.[1]) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
      labels.push(plain(heading[1]));
    }
    for (const match of line.matchAll(/<a (?:id|name)="([^"]+)"><\/a>\s*(?:\*\*([^*]+)\*\*)?/g)) {
      if (match[1]) anchors.add(match[1]);
      if (match[2]) labels.push(plain(match[2]));
    }
    const bold = /^(?:- )?\*\*([^*]+)\*\*/.exec(line);
    if (bold?.[1]) labels.push(plain(bold[1]));
    const row = /^\|\s*([^|]+?)\s*\|/.exec(line);
    if (row?.[1]) labels.push(plain(row[1]));
  }
  const targets = { anchors, labels };
  targetCache.set(file, targets);
  return targets;
}

const plain = (text: string) =>
  text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*_]/g, '')
    .trim()
    .toLowerCase();

/** A quoted section name matches a heading, label or table entry that starts with it. */
const names = (targets: Targets, quoted: string) => targets.labels.some((label) => label.startsWith(plain(quoted)));

describe('links between the docs', () => {
  it.each(MARKDOWN.map((f) => [rel(f), f]))('%s: every relative link reaches its file and anchor', (_name, file) => {
    const problems: string[] = [];
    const text = prose(readFileSync(file, 'utf8')).replace(/`[^`\n]*`/g, '');
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/i.test(target)) continue;
      const [where = '', anchor] = target.split('#');
      const resolved = where === '' ? file : path.resolve(path.dirname(file), decodeURI(where));
      if (!existsSync(resolved)) {
        problems.push(`${target}: no such file`);
        continue;
      }
      if (anchor && statSync(resolved).isFile() && resolved.endsWith('.md') && !targetsOf(resolved).anchors.has(anchor)) {
        problems.push(`${target}: no heading or anchor #${anchor} in ${rel(resolved)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('pages named in code, tests, workflows and prose', () => {
  it('exist, with the anchor or section they name', () => {
    const problems: string[] = [];
    const pattern = /\b(docs\/[\w./-]+?\.md|README(?:\.md)?)(#[\w-]+)?(?:,? "([^"\n]+)")?/g;
    for (const file of FILES) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(pattern)) {
        const [, page = '', anchor, quoted] = match;
        if (page.startsWith('README') && !anchor && !quoted) continue;
        const target = path.join(ROOT, page.startsWith('README') ? 'README.md' : page);
        const where = `${rel(file)}: ${match[0]}`;
        if (!existsSync(target)) {
          problems.push(`${where}: no such page`);
          continue;
        }
        const targets = targetsOf(target);
        if (anchor && !targets.anchors.has(anchor.slice(1))) problems.push(`${where}: no anchor ${anchor}`);
        if (quoted && !names(targets, quoted)) problems.push(`${where}: no section "${quoted}"`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('README.md', () => {
  it('is a map: at most 12 KB', () => {
    expect(statSync(path.join(ROOT, 'README.md')).size).toBeLessThanOrEqual(12 * 1024);
  });
});
