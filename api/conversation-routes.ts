/** The conversation routes of the HTTP API: send a message (the first one starts the conversation), and read its history. */
import { z } from 'zod';
import type { AgentDefinition, TurnBudget, UserContentPart } from '../workflows/types/index.js';
import { answer, conversationNotFound, sendError } from './replies.js';
import { requestPlacement } from './tenant-binding.js';
import { sendMessageBody } from './request-schemas.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

export function registerConversationRoutes(app: ApiApp, { client, access }: RouteContext): void {
  const api = zodRoutes(app);

  api.post(
    '/api/conversations/:conversationId/messages',
    { schema: { params: z.object({ conversationId: z.string().min(1).max(200) }), body: sendMessageBody } },
    async (request, reply) => {
      const { conversationId } = request.params;
      const { model, system, content, agents, agent, budget, tenant, priority, ...message } = request.body;
      // The tenant is the caller's own (a body's only from an admin): refused before anything starts.
      const placement = requestPlacement(request.caller!, access.isAdmin(request.caller!), { ...(tenant !== undefined ? { tenant } : {}), ...(priority !== undefined ? { priority } : {}) });
      if (typeof placement === 'string') return sendError(reply, 'InvalidRequest', placement);
      const conversation = {
        ...(model || !agents ? { model: model ?? { provider: 'scripted' as const, model: 'demo' } } : {}),
        ...(system ? { system } : {}),
        ...(agents ? { agents: agents as Record<string, AgentDefinition> } : {}),
        ...(agent !== undefined ? { agent } : {}),
        ...(budget ? { budget: budget as TurnBudget } : {}),
      };
      // The parts' details are the conversation's to check: it refuses a bad one before accepting the message.
      const parts = content ? { content: content as unknown as UserContentPart[] } : {};
      // A first message creates the conversation, with the caller as its starter; later ones come from its readers.
      if ((await access.mayReadConversation(request.caller!, conversationId)) === false) return conversationNotFound(reply, conversationId);
      return answer(reply, () => client.sendMessage({ conversationId, conversation, ...message, ...parts, startedBy: caller(request), ...placement }), 202);
    },
  );

  api.get(
    '/api/conversations/:conversationId/history',
    { schema: { params: z.object({ conversationId: z.string().min(1) }), querystring: z.object({ offset: z.coerce.number().int().min(0).optional(), limit: z.coerce.number().int().min(1).max(1000).optional(), branch: z.string().min(1).max(200).optional() }) } },
    async (request, reply) => {
      if ((await access.mayReadConversation(request.caller!, request.params.conversationId)) !== true) return conversationNotFound(reply, request.params.conversationId);
      return answer(reply, () => client.history(request.params.conversationId, request.query));
    },
  );
}
