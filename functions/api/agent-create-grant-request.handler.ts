import { agentCreateGrantRequestOperation } from '../operations/grant-requests';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(agentCreateGrantRequestOperation);
