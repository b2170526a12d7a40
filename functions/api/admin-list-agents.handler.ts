import { adminListAgentsOperation } from '../operations/admin';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminListAgentsOperation);
