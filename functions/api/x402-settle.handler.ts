import { x402SettleOperation } from '../operations/x402-facilitator';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(x402SettleOperation);
