/**
 * What a write request touches, read from the request itself (never from a timing, never from a
 * list of the service's item kinds): the table item of every Put, Update, Delete and
 * ConditionCheck, and the partitions each lands in — the table partition (PK) and, for every
 * index the table declares (functions/store/table.ts INDEXES), the index partition of a written
 * item (its index partition key in a Put's item, or set by an Update's SET clause).
 *
 * DESIGN §18's counted lines are built from these: the items every charge of one agent (or of one
 * payer) shares — on AWS concurrent transactions that touch the same item conflict, so such an item
 * serializes them — and how 1000 charges of one agent spread their writes over partitions.
 */
import { INDEXES, TABLE_KEYS } from '../../functions/store/table';

export type WriteOp = 'Put' | 'Update' | 'Delete' | 'ConditionCheck';

export interface TouchedItem {
  op: WriteOp;
  /** The table item, `PK|SK`. */
  item: string;
  /** The partitions the write lands in: `table:<PK>` and `<index name>:<index PK>`. */
  partitions: string[];
}

export interface IndexDeclaration {
  readonly indexName: string;
  readonly partitionKey: string;
}

type Attrs = Record<string, unknown>;

/** A key attribute's text, whether the request is in the document client's form or marshalled (`{ S: … }`). */
function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (value && typeof value === 'object') {
    const v = value as { S?: unknown; N?: unknown };
    if (typeof v.S === 'string') return v.S;
    if (typeof v.N === 'string') return v.N;
  }
  return undefined;
}

const itemKey = (key: Attrs | undefined): string =>
  `${text(key?.[TABLE_KEYS.partitionKey]) ?? '?'}|${text(key?.[TABLE_KEYS.sortKey]) ?? '?'}`;

/** Splits on `sep` outside parentheses. */
function splitTopLevel(s: string, sep: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === sep && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.map((x) => x.trim()).filter(Boolean);
}

/**
 * The attribute values an UpdateExpression's SET clause assigns, by attribute name (names and
 * values resolved; `if_not_exists(a, :v)` and `:v` alike give the value of `:v`).
 */
export function setAssignments(expression: string | undefined, names: Attrs = {}, values: Attrs = {}): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!expression) return out;
  // Clauses start with their keyword; SET's assignments run up to the next keyword.
  const clauses = expression.split(/\b(?=(?:SET|REMOVE|ADD|DELETE)\s)/);
  for (const clause of clauses) {
    const m = /^\s*SET\s+([\s\S]*)$/.exec(clause);
    if (!m?.[1]) continue;
    for (const assignment of splitTopLevel(m[1], ',')) {
      const eq = assignment.indexOf('=');
      if (eq < 0) continue;
      const path = assignment.slice(0, eq).trim();
      const name = path.startsWith('#') ? text(names[path]) : path;
      const operand = /:[A-Za-z0-9_]+/.exec(assignment.slice(eq + 1))?.[0];
      if (name && operand && operand in values) out.set(name, values[operand]);
    }
  }
  return out;
}

function indexPartitions(attrs: (name: string) => unknown, indexes: readonly IndexDeclaration[]): string[] {
  return indexes.flatMap((index) => {
    const pk = text(attrs(index.partitionKey));
    return pk === undefined ? [] : [`${index.indexName}:${pk}`];
  });
}

function touched(op: WriteOp, request: Attrs, indexes: readonly IndexDeclaration[]): TouchedItem {
  const key = (op === 'Put' ? request.Item : request.Key) as Attrs | undefined;
  const item = itemKey(key);
  const partitions = [`table:${text(key?.[TABLE_KEYS.partitionKey]) ?? '?'}`];
  if (op === 'Put') partitions.push(...indexPartitions((n) => (request.Item as Attrs)[n], indexes));
  if (op === 'Update') {
    const set = setAssignments(
      request.UpdateExpression as string | undefined,
      request.ExpressionAttributeNames as Attrs | undefined,
      request.ExpressionAttributeValues as Attrs | undefined,
    );
    partitions.push(...indexPartitions((n) => set.get(n), indexes));
  }
  // A Delete (or a REMOVE of an index key) also removes an index entry, but which one is in the old
  // item, not in the request: not counted.
  return { op, item, partitions };
}

const OPS: readonly WriteOp[] = ['Put', 'Update', 'Delete', 'ConditionCheck'];

/** What one write command touches (reads and unknown commands: nothing). */
export function touchedBy(command: string, input: Attrs, indexes: readonly IndexDeclaration[] = INDEXES): TouchedItem[] {
  switch (command.replace(/Command$/, '')) {
    case 'TransactWriteItems':
      return ((input.TransactItems as Attrs[] | undefined) ?? []).flatMap((entry) =>
        OPS.filter((op) => entry[op] !== undefined).map((op) => touched(op, entry[op] as Attrs, indexes)),
      );
    case 'PutItem':
      return [touched('Put', input, indexes)];
    case 'UpdateItem':
      return [touched('Update', input, indexes)];
    case 'DeleteItem':
      return [touched('Delete', input, indexes)];
    case 'BatchWriteItem':
      return Object.values((input.RequestItems as Record<string, Attrs[]> | undefined) ?? {}).flatMap((requests) =>
        requests.flatMap((r) => [
          ...(r.PutRequest ? [touched('Put', r.PutRequest as Attrs, indexes)] : []),
          ...(r.DeleteRequest ? [touched('Delete', r.DeleteRequest as Attrs, indexes)] : []),
        ]),
      );
    default:
      return [];
  }
}

/** The items (table keys) every one of `sets` contains, sorted. No sets: none. */
export function sharedByAll(sets: readonly ReadonlySet<string>[]): string[] {
  const [first, ...rest] = sets;
  if (!first) return [];
  return [...first].filter((k) => rest.every((s) => s.has(k))).sort();
}

/** A key's family: up to and including its first `#` (ids and key hashes stay out of reports). */
export function familyOf(key: string): string {
  const i = key.indexOf('#');
  return i < 0 ? key : key.slice(0, i + 1);
}

export interface PartitionSpread {
  charges: number;
  /** Writes summed over partitions: each touched item counts once in each partition it lands in. */
  writes: number;
  /** Partitions written by more than one of the charges: where charges can queue behind each other. */
  partitions: number;
  /** Partitions only one charge wrote (its idempotency record, its by-id index entry, …). */
  singleUse: number;
  /** The partition taking the most writes, as its family (`table:CHARGES#`). */
  hottest: string;
  /** Its writes ÷ all writes. */
  maxShare: number;
  /** The fraction of the charges that wrote it. */
  hottestChargeShare: number;
  /** The item most of the charges touched (a ConditionCheck counts), as `<family>|<SK>`, and the fraction of the charges that touched it. */
  hottestItem: string;
  hottestItemChargeShare: number;
}

/** How the charges' writes spread over table and index partitions (`perCharge`: what each touched). */
export function partitionSpread(perCharge: readonly (readonly TouchedItem[])[]): PartitionSpread {
  const writes = new Map<string, number>();
  const chargesWriting = new Map<string, number>();
  const chargesTouching = new Map<string, number>();
  for (const touchedItems of perCharge) {
    const mine = new Set<string>();
    for (const item of new Set(touchedItems.map((t) => t.item))) chargesTouching.set(item, (chargesTouching.get(item) ?? 0) + 1);
    for (const t of touchedItems) {
      for (const p of t.partitions) {
        writes.set(p, (writes.get(p) ?? 0) + 1);
        mine.add(p);
      }
    }
    for (const p of mine) chargesWriting.set(p, (chargesWriting.get(p) ?? 0) + 1);
  }
  const total = [...writes.values()].reduce((a, b) => a + b, 0);
  let hottest = '';
  let max = 0;
  for (const [p, n] of writes) {
    if (n > max || (n === max && p < hottest)) {
      hottest = p;
      max = n;
    }
  }
  const shared = [...chargesWriting.values()].filter((n) => n > 1).length;
  let hottestItem = '';
  let itemMax = 0;
  for (const [item, n] of chargesTouching) {
    if (n > itemMax || (n === itemMax && item < hottestItem)) {
      hottestItem = item;
      itemMax = n;
    }
  }
  const [itemPk = '', itemSk = ''] = hottestItem.split('|');
  const colon = hottest.indexOf(':');
  return {
    charges: perCharge.length,
    writes: total,
    partitions: shared,
    singleUse: chargesWriting.size - shared,
    hottest: hottest ? `${hottest.slice(0, colon + 1)}${familyOf(hottest.slice(colon + 1))}` : '',
    maxShare: total ? max / total : 0,
    hottestChargeShare: perCharge.length ? (chargesWriting.get(hottest) ?? 0) / perCharge.length : 0,
    hottestItem: hottestItem ? `${familyOf(itemPk)}|${itemSk}` : '',
    hottestItemChargeShare: perCharge.length ? itemMax / perCharge.length : 0,
  };
}
