import { agentGetGrantRequestOperation } from '../operations/grant-requests';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(agentGetGrantRequestOperation);
