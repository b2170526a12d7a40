/**
 * Layers point down (docs/design.md §20): read every import of functions/, bin/ and lib/ with the
 * TypeScript compiler's own pre-processor (type-only imports count too: a type is a dependency of
 * the shape) and refuse an import against the direction of the layers, a cycle between the
 * top-level folders of functions/, a cycle between any two files, an import of bin/ from below it,
 * and anything but core/ and pure libraries in core/ (the domain does no I/O: no AWS SDK, no
 * network, no files).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const FUNCTIONS = path.join(ROOT, 'functions');

interface Import {
  /** The importing file, relative to functions/ (`use-cases/charges/charges.ts`). */
  from: string;
  /** What it names: a package (`zod`) or a file relative to functions/ (`contracts/request.schemas`). */
  to: string;
  /** True for a file inside functions/. */
  local: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

function importsOf(file: string): Import[] {
  const from = path.relative(FUNCTIONS, file);
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles.map(({ fileName }) => {
    if (!fileName.startsWith('.')) return { from, to: fileName, local: false };
    const to = path.relative(FUNCTIONS, path.resolve(path.dirname(file), fileName));
    return { from, to, local: !to.startsWith('..') };
  });
}

/** The top-level folder of functions/ a path is in (`config` for functions/config.ts). */
const folderOf = (relative: string) => relative.split(path.sep)[0]?.replace(/\.ts$/, '') ?? relative;

const IMPORTS = sourceFiles(FUNCTIONS).flatMap(importsOf);
const describeImport = (i: Import) => `${i.from} imports ${i.to}`;
const localFrom = (folder: string) => IMPORTS.filter((i) => i.local && folderOf(i.from) === folder && folderOf(i.to) !== folder);

/** The edges between top-level folders, each with one import that makes it. */
function folderGraph(imports: readonly Import[]): Map<string, Map<string, Import>> {
  const graph = new Map<string, Map<string, Import>>();
  for (const i of imports) {
    if (!i.local) continue;
    const a = folderOf(i.from);
    const b = folderOf(i.to);
    if (a === b) continue;
    const edges = graph.get(a) ?? new Map<string, Import>();
    if (!edges.has(b)) edges.set(b, i);
    graph.set(a, edges);
  }
  return graph;
}

/** Every cycle's nodes (one list per strongly connected component of more than one node), Tarjan's way. */
function folderCycles(graph: Map<string, Map<string, unknown>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** One import between two files of the repository, both relative to its root (`functions/store/charges/payer.ts`). */
interface FileEdge {
  from: string;
  to: string;
}

/** The file a relative import names (`./payer` → `payer.ts`, `./local` → `local/index.ts`), if it is one of ours. */
function resolveFile(fromFile: string, name: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), name);
  return [`${base}.ts`, path.join(base, 'index.ts'), base].find((candidate) => candidate.endsWith('.ts') && existsSync(candidate));
}

/** Every import between two files under `roots` (relative to the repository root). */
function fileEdges(roots: readonly string[]): FileEdge[] {
  return roots.flatMap((root) =>
    sourceFiles(path.join(ROOT, root)).flatMap((file) =>
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.filter(({ fileName }) => fileName.startsWith('.'))
        .flatMap(({ fileName }) => {
          const to = resolveFile(file, fileName);
          return to ? [{ from: path.relative(ROOT, file), to: path.relative(ROOT, to) }] : [];
        }),
    ),
  );
}

/** The graph of `edges`, each node's neighbours in import order. */
function graphOf<E extends { from: string; to: string }>(edges: readonly E[]): Map<string, Map<string, E>> {
  const graph = new Map<string, Map<string, E>>();
  for (const e of edges) {
    if (e.from === e.to) continue;
    const out = graph.get(e.from) ?? new Map<string, E>();
    if (!out.has(e.to)) out.set(e.to, e);
    graph.set(e.from, out);
  }
  return graph;
}

const FILE_EDGES = fileEdges(['functions', 'bin', 'lib']);

/** The packages core/ may import: computation only (hashing, ids, encodings, validation, curves). */
/** The folders of functions/ core/ may import. */
const CORE_LOCAL_FOLDERS = new Set(['core', 'messages']);

const CORE_PACKAGES = new Set(['node:crypto', 'ulid', 'bs58', 'zod', '@noble/curves/ed25519.js', 'confusables']);

describe('the layers of functions/', () => {
  it('reads the imports it judges (a sanity check of the walk itself)', () => {
    expect(IMPORTS.length).toBeGreaterThan(500);
    expect(IMPORTS).toContainEqual({
      from: path.join('operations', 'charges.ts'),
      to: path.join('use-cases', 'charges', 'charges'),
      local: true,
    });
  });

  it('use cases import nothing from the API adapter or the HTTP layer', () => {
    const wrong = localFrom('use-cases').filter((i) => ['api', 'http'].includes(folderOf(i.to)));
    expect(wrong.map(describeImport)).toEqual([]);
  });

  it('adapters never import store/: the API, the console, MCP and the pages reach the table through use cases (DESIGN §25)', () => {
    const adapters = ['api', 'console', 'mcp', 'pages'];
    const files = IMPORTS.filter((i) => adapters.includes(folderOf(i.from)));
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((i) => i.local && folderOf(i.to) === 'store').map(describeImport)).toEqual([]);
  });

  it('the MCP adapter imports nothing from the API adapter', () => {
    expect(
      localFrom('mcp')
        .filter((i) => folderOf(i.to) === 'api')
        .map(describeImport),
    ).toEqual([]);
  });

  it('the OpenAPI builder imports nothing from the MCP adapter (both read contracts/)', () => {
    const builder = IMPORTS.filter((i) => i.local && i.from.startsWith(path.join('api', 'openapi') + path.sep));
    expect(builder.filter((i) => folderOf(i.to) === 'mcp').map(describeImport)).toEqual([]);
  });

  it('contracts read only zod, lossless-json, the domain (core), the message catalogue and the configuration (the stage maximum amount)', () => {
    const files = IMPORTS.filter((i) => folderOf(i.from) === 'contracts');
    const wrong = files.filter((i) =>
      i.local ? !['contracts', 'core', 'messages', 'config'].includes(folderOf(i.to)) : !['zod', 'lossless-json'].includes(i.to),
    );
    expect(wrong.map(describeImport)).toEqual([]);
  });

  it('the operation registry sits below both adapters: it reads the grants vocabulary, the configuration needs, the domain and the contracts its operations name, never an adapter or a use case', () => {
    const files = IMPORTS.filter((i) => folderOf(i.from) === 'registry');
    expect(files.length).toBeGreaterThan(0);
    // Each entry's OpenAPI operation names the schemas its handler validates with (contracts/, which reads zod and lossless-json).
    const allowed = (i: Import) =>
      i.local
        ? i.to === path.join('store', 'access') || ['registry', 'config', 'core', 'messages', 'contracts'].includes(folderOf(i.to))
        : ['zod', 'lossless-json'].includes(i.to);
    const wrong = files.filter((i) => !allowed(i));
    expect(wrong.map(describeImport)).toEqual([]);
    // Both adapters read it: the MCP tools name their routes there.
    expect(IMPORTS.some((i) => folderOf(i.from) === 'mcp' && folderOf(i.to) === 'registry')).toBe(true);
  });

  it('the message catalogue is a leaf: every layer may name a refusal, and it names nothing', () => {
    const files = IMPORTS.filter((i) => folderOf(i.from) === 'messages');
    const wrong = files.filter((i) => !i.local || folderOf(i.to) !== 'messages');
    expect(wrong.map(describeImport)).toEqual([]);
  });

  it('no two top-level folders of functions/ import each other, directly or round a longer cycle', () => {
    const graph = folderGraph(IMPORTS);
    const cycles = folderCycles(graph).map((folders) => {
      // Name one import per edge inside the cycle, so the failure says where to look.
      const edges = folders.flatMap((a) => folders.flatMap((b) => (a !== b && graph.get(a)?.get(b) ? [graph.get(a)?.get(b)] : [])));
      return `${folders.join(' ↔ ')}: ${edges.map((i) => (i ? describeImport(i) : '')).join('; ')}`;
    });
    expect(cycles).toEqual([]);
  });

  it('no file imports itself round a cycle, in functions/, bin/ or lib/ (type-only imports count)', () => {
    const graph = graphOf(FILE_EDGES);
    const cycles = folderCycles(graph).map((files) => files.join(' ↔ '));
    expect(cycles).toEqual([]);
  });

  it('finds a file cycle when there is one, type-only or not (the check can fail)', () => {
    const edges = fileEdges(['functions']);
    expect(edges).toContainEqual({
      from: path.join('functions', 'store', 'audit', 'audit.repository.ts'),
      to: path.join('functions', 'store', 'audit', 'ledger-rows.mapper.ts'),
    });
    const made = [
      ...edges,
      {
        from: path.join('functions', 'store', 'audit', 'ledger-rows.mapper.ts'),
        to: path.join('functions', 'store', 'audit', 'audit.repository.ts'),
      },
    ];
    expect(folderCycles(graphOf(made)).map((files) => files.join(' ↔ '))).toContain(
      [
        path.join('functions', 'store', 'audit', 'audit.repository.ts'),
        path.join('functions', 'store', 'audit', 'ledger-rows.mapper.ts'),
      ].join(' ↔ '),
    );
  });

  it('bin/ is the top: nothing in functions/ or lib/ imports it', () => {
    const wrong = FILE_EDGES.filter((e) => !e.from.startsWith(`bin${path.sep}`) && e.to.startsWith(`bin${path.sep}`));
    expect(wrong.map((e) => `${e.from} imports ${e.to}`)).toEqual([]);
    // The walk reads bin/ (a sanity check): the admin CLI's own imports are there.
    expect(FILE_EDGES.some((e) => e.from === path.join('bin', 'operator', 'admin-cli.ts'))).toBe(true);
  });

  it('core/ imports only core/, messages/ and pure libraries: no AWS SDK, no Lambda types, no network or file modules', () => {
    const files = IMPORTS.filter((i) => folderOf(i.from) === 'core');
    expect(files.length).toBeGreaterThan(20);
    // messages/ (the refusal catalogue and `refuse`) is a leaf below core/: core's decisions refuse by its codes.
    const wrong = files.filter((i) => (i.local ? !CORE_LOCAL_FOLDERS.has(folderOf(i.to)) : !CORE_PACKAGES.has(i.to)));
    expect(wrong.map(describeImport)).toEqual([]);
  });

  it('messages/ is a leaf: it imports only messages/ and no package', () => {
    const files = IMPORTS.filter((i) => folderOf(i.from) === 'messages');
    expect(files.length).toBeGreaterThan(0);
    const wrong = files.filter((i) => !i.local || folderOf(i.to) !== 'messages');
    expect(wrong.map(describeImport)).toEqual([]);
  });

  it('only store/ talks to DynamoDB: no other file of functions/ imports a DynamoDB package or the store client', () => {
    const dynamo = /^@aws-sdk\/(client-dynamodb|lib-dynamodb|util-dynamodb|client-dynamodb-streams)$/;
    const wrong = IMPORTS.filter(
      (i) => folderOf(i.from) !== 'store' && (i.local ? i.to === path.join('store', 'client') : dynamo.test(i.to)),
    );
    expect(wrong.map(describeImport)).toEqual([]);
    expect(IMPORTS.some((i) => folderOf(i.from) === 'store' && i.to === '@aws-sdk/lib-dynamodb')).toBe(true);
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    const made = (from: string, to: string): Import => ({ from: path.join(from, 'x.ts'), to: path.join(to, 'y'), local: true });
    expect(folderCycles(folderGraph([made('a', 'b'), made('b', 'c'), made('c', 'a'), made('c', 'd')]))).toEqual([['a', 'b', 'c']]);
    expect(folderCycles(folderGraph([made('a', 'b'), made('b', 'c')]))).toEqual([]);
  });
});
