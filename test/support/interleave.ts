/**
 * Deterministic interleavings for race tests. DynamoDB Local runs one request at a time, so which
 * of two racing requests lands between another's read and its write is luck; this puts it there:
 * once a matching command of the service's DynamoDB client has completed, `between` runs (and
 * completes) before the service sees that command's answer. `between` may itself call the service:
 * its own commands never match again (the interleaving fires once).
 */
import { db } from '../../functions/store/client';

export interface Interleaving {
  /** Whether it fired. */
  fired(): boolean;
  remove(): void;
}

let seq = 0;

export function afterCommand(opts: {
  /** SDK command name, e.g. `TransactWriteItemsCommand`, `GetItemCommand`, `BatchGetItemCommand`. */
  command: string;
  /** Narrows which command (its input as the document client built it). */
  match: (input: Record<string, unknown>) => boolean;
  between: () => Promise<unknown>;
  /**
   * Rewrites the answer the service sees, from the answer before `between` and the command's input
   * (to give what a read that straddled `between` saw: some items from before, some from after).
   */
  answer?: (before: unknown, input: Record<string, unknown>) => Promise<unknown>;
}): Interleaving {
  const name = `interleave-${++seq}`;
  let fired = false;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (fired || context.commandName !== opts.command || !opts.match(args.input as Record<string, unknown>)) return next(args);
      fired = true;
      const out = await next(args);
      await opts.between();
      if (!opts.answer) return out;
      return { ...out, output: (await opts.answer(out.output, args.input as Record<string, unknown>)) as typeof out.output };
    },
    { step: 'initialize', name },
  );
  return { fired: () => fired, remove: () => void db().middlewareStack.remove(name) };
}

/** The input's text, to match on keys and expressions whichever form (marshalled or not) it has. */
export const inputText = (input: Record<string, unknown>): string => JSON.stringify(input);
