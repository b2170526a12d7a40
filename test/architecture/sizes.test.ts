/**
 * A file does one job (STYLE.md; docs/design.md §25, item 4): no file in functions/ over 350 lines
 * and no function over 80. A file that outgrows the first has usually grown a second job, a
 * function that outgrows the second a second decision; both are easier to read split by job.
 * Every function counts — declarations, methods, arrow functions and function expressions — from
 * its first line to its last, a nested function inside its parent's lines. Read with the
 * TypeScript compiler, so a line of a template string or a comment counts like any other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const FUNCTIONS = path.join(ROOT, 'functions');

const MAX_FILE_LINES = 350;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The file's path from the repository's root, with forward slashes (`functions/store/keys.ts`). */
const relativeOf = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/** Lines as `wc -l` counts them: a final newline ends the last line rather than starting one. */
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

type FunctionNode =
  | ts.FunctionDeclaration
  | ts.MethodDeclaration
  | ts.ArrowFunction
  | ts.FunctionExpression
  | ts.ConstructorDeclaration
  | ts.GetAccessorDeclaration
  | ts.SetAccessorDeclaration;

const isFunction = (node: ts.Node): node is FunctionNode =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

const nameText = (name: ts.Node | undefined, source: ts.SourceFile) => (name ? name.getText(source) : undefined);

/** What a reader would call the function: its own name, else the name it is bound to. */
function functionName(node: FunctionNode, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const own = 'name' in node ? nameText(node.name, source) : undefined;
  if (own) return own;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return nameText(parent.name, source) ?? '<anonymous>';
  }
  if (ts.isExportAssignment(parent)) return 'default';
  return '<anonymous>';
}

interface Oversize {
  file: string;
  line: number;
  name: string;
  lines: number;
}

function oversizeFunctions(file: string): Oversize[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Oversize[] = [];
  const visit = (node: ts.Node) => {
    if (isFunction(node) && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        found.push({ file: relativeOf(file), line: start + 1, name: functionName(node, source), lines });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const FILES = sourceFiles(FUNCTIONS);
const describeOversize = ({ file, line, name, lines }: Oversize) => `${file}:${line} ${name} ${lines} lines`;

describe('sizes of functions/ (a file does one job)', () => {
  it('reads the files it checks', () => {
    expect(FILES.length).toBeGreaterThan(50);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const over = FILES.map((file) => ({ file: relativeOf(file), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ file, lines }) => `${file}:1 ${path.basename(file)} ${lines} lines`);
    expect(over).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(FILES.flatMap(oversizeFunctions).map(describeOversize)).toEqual([]);
  });
});
