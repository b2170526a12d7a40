import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { x402Supported } from '../use-cases/x402';
import { readOnlyFacilitator } from '../x402/facilitator';

loadConfig({ require: NEEDS.x402Supported });

/** GET /x402/supported — public (a stock client's Bearer header is accepted and ignored); the kinds, signers. */
export const handler = httpHandler(async () => ({ statusCode: 200, body: x402Supported(await readOnlyFacilitator()) }));
