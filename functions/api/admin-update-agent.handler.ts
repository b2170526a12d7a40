import { adminUpdateAgentOperation } from '../operations/admin-agents';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminUpdateAgentOperation);
