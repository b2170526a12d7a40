import { x402SettingsOperation } from '../operations/x402-facilitator';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(x402SettingsOperation);
