/**
 * Public words live in the message catalogue (functions/messages/catalogue.ts) and nowhere else:
 * a decision names its problem by a catalogue key and takes the words from there. This reads every
 * string and template literal (not comments, not types) of the folders cleaned so far and refuses
 * one worded like a message ("must …", "unsupported …", "invalid …", "exceeds …", "below …"),
 * naming its file and line. The message of an internal error (a broken invariant's RangeError, a
 * rail's configuration error, a domain outcome's `super(…)`: core/errors.ts) is for logs and
 * alarms, never an answer (a use case answers a domain outcome with a catalogue refusal by its
 * class), so it is not read; an error whose words are answered (core/money.ts AmountError) is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const FUNCTIONS = path.join(__dirname, '..', '..', 'functions');
/**
 * The folders whose words are all the catalogue's; a folder joins when it is cleaned. Not yet:
 * mcp/, registry/ and contracts/ (their descriptions are prose that reads like this), console/
 * and pages/ (pages of prose).
 */
const CLEAN = [
  'core',
  'use-cases',
  'x402',
  'webhooks',
  'rails',
  // Held no message literal when the rule was written: kept so.
  'api',
  'audit',
  'http',
  'kill-switch',
  'kill-switch-fanout',
  'ledger-audit',
  'net',
  'observability',
  'payout-worker',
  'queue',
  'reconciler',
  'store',
  'sweeper',
  'topup-watcher',
  'webhook-delivery',
  'webhook-dispatcher',
];
/** Errors whose message no one is answered with. */
const INTERNAL_ERRORS = new Set(['Error', 'RangeError', 'TypeError', 'RailConfigError']);
const MESSAGE_LIKE = /(^|[\s:])(must|unsupported|invalid|exceeds|below) /;
/** Codes that read like words: a value of a typed union, shown to operators only (core/topups.ts UnmatchedReason). */
const CODES = new Set(['below minimum']);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** `file:line: text` of every message-like literal of one source text. */
function messageLiterals(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, words: string) => {
    if (!MESSAGE_LIKE.test(words) || CODES.has(words)) return;
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    found.push(`${path.relative(FUNCTIONS, file)}:${line + 1}: ${JSON.stringify(words)}`);
  };
  const visit = (node: ts.Node): void => {
    // A type's literal is a code's spelling, not words anyone is answered with.
    if (ts.isLiteralTypeNode(node) || ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && INTERNAL_ERRORS.has(node.expression.text)) return;
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.SuperKeyword) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) report(node, node.text);
    else if (ts.isTemplateExpression(node)) {
      report(node, [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join('…'));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('public words are the catalogue’s', () => {
  it.each(CLEAN)('functions/%s/ writes no message-like literal', (folder) => {
    const found = tsFiles(path.join(FUNCTIONS, folder)).flatMap((file) => messageLiterals(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('finds a message put back as a literal, in a string or a template, and not in a comment or a type', () => {
    const file = path.join(FUNCTIONS, 'core', 'example.ts');
    const text = [
      "// 'must be a number' in a comment is fine",
      "type Reason = 'below minimum';",
      "const a = 'must be a number';",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
      'const b = `${field} must not exceed ${max}`;',
      "const c = { reason: 'invalid paypal account' };",
      "throw new RangeError('invalid gross amount');",
      "throw new AmountError(field, 'number', 'must be a number');",
    ].join('\n');
    expect(messageLiterals(file, text)).toEqual([
      'core/example.ts:3: "must be a number"',
      'core/example.ts:4: "… must not exceed …"',
      'core/example.ts:5: "invalid paypal account"',
      'core/example.ts:7: "must be a number"',
    ]);
  });
});
