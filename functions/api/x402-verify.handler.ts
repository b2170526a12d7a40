import { x402VerifyOperation } from '../operations/x402-facilitator';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(x402VerifyOperation);
