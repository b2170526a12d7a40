import { adminGetAgentOperation } from '../operations/admin';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(adminGetAgentOperation);
