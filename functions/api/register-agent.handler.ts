import { registerAgentOperation } from '../operations/agents';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(registerAgentOperation);
