import { adminListAgentChargesOperation } from '../operations/charges';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminListAgentChargesOperation);
