/**
 * The configuration reference (docs/reference/configuration.md), rendered from functions/config.ts's
 * parts (functions/config/fields.ts, schema.ts and needs.ts, read as one text: bin/docs/pages.ts):
 * the zod schema gives each variable's default, whether it must be set and what it accepts; the
 * source gives its meaning (the variable's JSDoc, or its `.describe()` text) and its section (the
 * `// …` line comment above a group). The rules across variables come from the schema's refinements.
 */
import * as ts from 'typescript';
import type * as z from 'zod';
import { toJSONSchema } from 'zod';
import { code, generatedNotice, slug, table } from './markdown';

export interface ConfigVariable {
  name: string;
  section: string;
  meaning: string;
  /** The value used when the variable is unset, as it would be written in the environment. */
  default: string | undefined;
  /** Unset and no default: every function fails its init without it. */
  required: boolean;
  accepts: string;
}

export interface CrossRule {
  path: string;
  message: string;
  why: string;
}

/** The first section: the variables above the first `// Section` comment. */
const FIRST_SECTION = 'Service';

const commentText = (raw: string) =>
  raw
    .replace(/^\/\*\*?/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .filter((line) => line.length > 0)
    .join(' ')
    .trim();

/**
 * What a kind of function must have on top of the shared base (a `NEEDS_*` list of config.ts):
 * which functions, in the words of its comment, and the variables, each group one of alternatives.
 */
export interface Need {
  name: string;
  who: string;
  /** Each entry a requirement: one variable, or alternatives (`ADMIN_KEY` or `ADMIN_KEY_SECRET_ARN`). */
  requirements: string[];
}

interface SourceDocs {
  /** Per variable: its section and its JSDoc, in source order. */
  fields: { name: string; section: string; jsdoc: string | undefined }[];
  rules: CrossRule[];
  needs: Need[];
}

function stringValue(node: ts.Expression): string {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return stringValue(node.left) + stringValue(node.right);
  }
  if (ts.isParenthesizedExpression(node)) return stringValue(node.expression);
  throw new Error(`functions/config.ts: a refinement's message is not a plain string: ${node.getText()}`);
}

/** Reads what the source says and the schema cannot: each variable's comment, section and the rules' reasons. */
export function readConfigSource(text: string): SourceDocs {
  const file = ts.createSourceFile('config.ts', text, ts.ScriptTarget.ES2022, true);
  const declarations = new Map<string, ts.VariableDeclaration>();
  const statements = new Map<string, ts.VariableStatement>();
  for (const statement of file.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const d of statement.declarationList.declarations) {
      if (ts.isIdentifier(d.name)) {
        declarations.set(d.name.text, d);
        statements.set(d.name.text, statement);
      }
    }
  }

  const object = declarations.get('fields')?.initializer;
  const literal = object && ts.isCallExpression(object) ? object.arguments[0] : undefined;
  if (!literal || !ts.isObjectLiteralExpression(literal))
    throw new Error('functions/config.ts: `const fields = z.object({ … })` not found');

  let section = FIRST_SECTION;
  const fields: SourceDocs['fields'] = [];
  for (const property of literal.properties) {
    if (!ts.isPropertyAssignment(property) || !ts.isIdentifier(property.name)) continue;
    let jsdoc: string | undefined;
    for (const range of ts.getLeadingCommentRanges(text, property.getFullStart()) ?? []) {
      const raw = text.slice(range.pos, range.end);
      if (raw.startsWith('/**')) jsdoc = commentText(raw);
      else if (raw.startsWith('//')) section = raw.replace(/^\/\/\s*/, '').replace(/\.$/, '');
    }
    fields.push({ name: property.name.text, section, jsdoc });
  }

  const rules: CrossRule[] = [];
  const schema = declarations.get('schema');
  const statement = statements.get('schema');
  if (schema?.initializer && statement) {
    const why = (ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? [])
      .map((r) => text.slice(r.pos, r.end))
      .filter((raw) => raw.startsWith('/**'))
      .map(commentText)
      .join(' ');
    const visit = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'refine' &&
        node.arguments[1] &&
        ts.isObjectLiteralExpression(node.arguments[1])
      ) {
        let path = '';
        let message = '';
        for (const p of node.arguments[1].properties) {
          if (!ts.isPropertyAssignment(p) || !ts.isIdentifier(p.name)) continue;
          if (p.name.text === 'message') message = stringValue(p.initializer);
          if (p.name.text === 'path' && ts.isArrayLiteralExpression(p.initializer)) {
            path = p.initializer.elements.map((e) => stringValue(e as ts.Expression)).join('.');
          }
        }
        rules.push({ path, message, why });
      }
      ts.forEachChild(node, visit);
    };
    visit(schema.initializer);
  }
  return { fields, rules, needs: readNeeds(text, statements) };
}

/** The `export const NEEDS_* = [...]` lists: string literals, `{ oneOf: [[…], […]] }` and spreads of other lists. */
function readNeeds(text: string, statements: Map<string, ts.VariableStatement>): Need[] {
  const lists = new Map<string, ts.Expression>();
  for (const [name, statement] of statements) {
    const declaration = statement.declarationList.declarations.find((d) => ts.isIdentifier(d.name) && d.name.text === name);
    if (name.startsWith('NEEDS_') && declaration?.initializer) lists.set(name, declaration.initializer);
  }
  const keys = (node: ts.Expression): string =>
    ts.isArrayLiteralExpression(node) ? node.elements.map((e) => code(stringValue(e as ts.Expression))).join(' and ') : '';
  const requirements = (node: ts.Expression, seen: Set<string>): string[] => {
    if (ts.isIdentifier(node)) {
      const target = lists.get(node.text);
      if (!target || seen.has(node.text)) return [];
      return requirements(target, new Set([...seen, node.text]));
    }
    if (ts.isArrowFunction(node)) {
      // A list chosen by the parsed configuration (NEEDS_ADMIN_AUTH): say which lists it may be.
      const named: string[] = [];
      const visit = (n: ts.Node) => {
        if (ts.isIdentifier(n) && lists.has(n.text) && !named.includes(n.text)) named.push(n.text);
        ts.forEachChild(n, visit);
      };
      visit(node.body);
      return named.map((n) => `those of ${code(n)}, as the comment says`);
    }
    if (!ts.isArrayLiteralExpression(node)) return [];
    return node.elements.flatMap((element) => {
      if (ts.isSpreadElement(element)) return requirements(element.expression, seen);
      if (ts.isStringLiteral(element)) return [code(element.text)];
      if (ts.isObjectLiteralExpression(element)) {
        const oneOf = element.properties.find((p) => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'oneOf');
        if (oneOf && ts.isPropertyAssignment(oneOf) && ts.isArrayLiteralExpression(oneOf.initializer)) {
          return [oneOf.initializer.elements.map((alternative) => keys(alternative as ts.Expression)).join(' or ')];
        }
      }
      return [];
    });
  };
  return [...lists.entries()].map(([name, initializer]) => {
    const statement = statements.get(name);
    const who = statement
      ? (ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? [])
          .map((r) => text.slice(r.pos, r.end))
          .filter((raw) => raw.startsWith('/**'))
          .map(commentText)
          .join(' ')
      : '';
    return { name, who, requirements: requirements(initializer, new Set([name])) };
  });
}

interface Inspected {
  optional: boolean;
  default: unknown;
  hasDefault: boolean;
}

/** Unwraps optional / default / pipe to find whether a variable may be unset and what it then is. */
function inspect(schema: z.ZodType): Inspected {
  const found: Inspected = { optional: false, default: undefined, hasDefault: false };
  let current: z.core.$ZodType | undefined = schema;
  for (let depth = 0; current && depth < 10; depth += 1) {
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType; defaultValue?: unknown };
    if (def.type === 'optional') {
      found.optional = true;
      current = def.innerType;
    } else if (def.type === 'default' || def.type === 'prefault') {
      if (!found.hasDefault) {
        found.hasDefault = true;
        found.default = def.defaultValue;
      }
      current = def.innerType;
    } else if (def.type === 'pipe') {
      current = def.in;
    } else {
      break;
    }
  }
  return found;
}

/** A default as the environment would spell it (a boolean switch is `0` or `1`). */
function envText(value: unknown): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

interface InputSchema {
  type?: string;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

/** What a variable accepts, from the schema of its input (the text in the environment). */
function acceptsOf(schema: z.ZodType): string {
  const input = toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as InputSchema;
  if (input.enum) return `one of ${input.enum.map((v) => code(String(v))).join(', ')}`;
  // z.number().int() bounds every integer by the safe-integer range: not a limit worth printing.
  const bound = (n?: number) => (n === undefined || Math.abs(n) >= Number.MAX_SAFE_INTEGER ? undefined : n);
  const range = (unit: string, low?: number, high?: number) => {
    const min = bound(low);
    const max = bound(high);
    if (min !== undefined && max !== undefined) return `${min} to ${max}${unit}`;
    if (min !== undefined) return `at least ${min}${unit}`;
    if (max !== undefined) return `at most ${max}${unit}`;
    return '';
  };
  if (input.type === 'integer' || input.type === 'number') {
    const positive = input.exclusiveMinimum === 0 && input.minimum === undefined;
    const limits = positive
      ? ['more than 0', range('', undefined, input.maximum)].filter(Boolean).join(', ')
      : range('', input.minimum, input.maximum);
    return [input.type === 'integer' ? 'a whole number' : 'a number', limits].filter(Boolean).join(', ');
  }
  if (input.format === 'uri') return 'a URL';
  const parts = ['text'];
  const length =
    input.minLength === 1 && input.maxLength === undefined ? 'not empty' : range(' characters', input.minLength, input.maxLength);
  if (length) parts.push(length);
  if (input.pattern) parts.push(`matching ${code(input.pattern)}`);
  return parts.join(', ');
}

export function configVariables(fields: z.ZodObject, source: string): { variables: ConfigVariable[]; rules: CrossRule[]; needs: Need[] } {
  const docs = readConfigSource(source);
  const shape = fields.shape as Record<string, z.ZodType>;
  const inSource = new Set(docs.fields.map((f) => f.name));
  const missingInSource = Object.keys(shape).filter((name) => !inSource.has(name));
  if (missingInSource.length > 0) throw new Error(`functions/config.ts: not found in the source: ${missingInSource.join(', ')}`);

  const variables = docs.fields.map(({ name, section, jsdoc }) => {
    const schema = shape[name];
    if (!schema) throw new Error(`functions/config.ts: ${name} is in the source but not in the schema`);
    const meaning = schema.description ?? jsdoc;
    if (!meaning) throw new Error(`functions/config.ts: ${name} has no description: add a JSDoc comment or .describe()`);
    const { optional, default: value, hasDefault } = inspect(schema);
    return {
      name,
      section,
      meaning,
      default: hasDefault ? envText(value) : undefined,
      required: !optional && !hasDefault,
      accepts: acceptsOf(schema),
    };
  });
  return { variables, rules: docs.rules, needs: docs.needs };
}

/** A section's title: its comment up to the first parenthesis or colon (`x402 (docs/x402.md): …` → `x402`). */
const title = (section: string) => section.split(/ \(|:/)[0]?.trim() || section;

/** What a section comment says beyond its title: its explanation, and a link to its docs page. */
function sectionNote(section: string): string[] {
  const colon = section.indexOf(': ');
  const rest = colon >= 0 ? section.slice(colon + 2) : '';
  const page = /docs\/([\w./-]+\.md)/.exec(section)?.[1];
  const note = [rest ? `${rest.charAt(0).toUpperCase()}${rest.slice(1)}.` : '', page ? `See [docs/${page}](../${page}).` : '']
    .filter(Boolean)
    .join(' ');
  return note ? [note, ''] : [];
}

export function renderConfigurationReference(fields: z.ZodObject, source: string): string {
  const { variables, rules, needs } = configVariables(fields, source);
  const out: string[] = [generatedNotice('functions/config.ts'), '', '# Configuration reference', ''];
  out.push(
    "Every variable the service's functions read, with its default and meaning. Functions read configuration " +
      'only through `functions/config.ts`: it parses `process.env` with zod once, at cold start, and a missing or ' +
      "malformed value fails the function's init with a message naming every problem. On top of these, each " +
      'function requires the variables of what it does ([below](#what-each-kind-of-function-needs)); a secret is ' +
      'given either as its value (local runs) or as the ARN of a Secrets Manager secret holding it (AWS).',
    '',
    "Who sets them: on AWS the CDK stack, from the stage's settings in `cdk.json` " +
      '([operating/stages.md](../operating/stages.md)); locally `npm start` (`bin/local/stack.ts`), whose own ' +
      'variables (`PORT`, `IN_MEMORY`, …) are in [getting-started.md](../getting-started.md#what-npm-start-reads).',
    '',
  );

  const sections = [...new Set(variables.map((v) => v.section))];
  out.push(sections.map((s) => `- [${title(s)}](#${slug(title(s))})`).join('\n'), '');
  for (const section of sections) {
    out.push(`## ${title(section)}`, '');
    out.push(...sectionNote(section));
    out.push(
      table(
        ['variable', 'default', 'accepts', 'meaning'],
        variables
          .filter((v) => v.section === section)
          .map((v) => [
            code(v.name),
            v.required ? '**required**' : v.default !== undefined ? code(v.default) : 'unset',
            v.accepts,
            v.meaning,
          ]),
      ),
      '',
    );
  }

  if (needs.length > 0) {
    out.push('## What each kind of function needs', '');
    out.push(
      'On top of the variables above, a function requires those of what it does, and fails its init naming any ' +
        'that is missing (`loadConfig` in `functions/config.ts`). Each row is one of its `NEEDS_*` lists; where a ' +
        'requirement names alternatives, one of them must be set in full.',
      '',
    );
    out.push(
      table(
        ['list', 'which functions', 'requires'],
        needs.map((n) => [code(n.name), n.who, n.requirements.join('; ')]),
      ),
      '',
    );
  }

  if (rules.length > 0) {
    out.push('## Rules across variables', '');
    for (const rule of rules) out.push(`- ${code(rule.path)}: ${rule.message}. ${rule.why}`);
    out.push('');
  }
  return `${out.join('\n').trimEnd()}\n`;
}
