import { agentWebhooksTestOperation } from '../operations/webhooks';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(agentWebhooksTestOperation);
