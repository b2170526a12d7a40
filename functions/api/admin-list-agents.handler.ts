import { adminListAgentsOperation } from '../operations/admin-agents';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminListAgentsOperation);
