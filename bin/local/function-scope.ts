/**
 * Which function's code is running. On AWS each handler is a Lambda of its own with a role of its
 * own; the local stack runs them all in one process on one DynamoDB client, so it marks each
 * invocation with the function's name. Tests read the mark to check every table request against
 * the sending function's grant, as IAM does on AWS (test/support/table-access.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const running = new AsyncLocalStorage<string>();

/** Runs `work` as function `name` (a route name, or a background function of functions/store/access.ts). */
export const asFunction = <T>(name: string, work: () => T): T => running.run(name, work);

/** The function whose code sent the current request; undefined outside any (test setup, tools). */
export const currentFunction = (): string | undefined => running.getStore();
