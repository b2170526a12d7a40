import { rotateAgentKeyOperation } from '../operations/agents';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(rotateAgentKeyOperation);
