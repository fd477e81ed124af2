/**
 * Steering routes of the HTTP API (docs/conversations.md, "Branches"): regenerate an answer, edit
 * a user message, list a conversation's branches and make one current, fork a turn from step
 * k, and read a turn's whole transcript (a fork's read through the turns it was forked from). A caller who may not read the conversation (or the turn) gets 404, as from every route that
 * shows one.
 */
import { z } from 'zod';
import { MODEL_PROVIDERS } from '../workflows/messages/model-providers.js';
import type { ModelSettings, TurnOptions, UserContentPart } from '../workflows/types/index.js';
import { answer, conversationNotFound, turnNotFound } from './replies.js';
import type { Caller } from './auth.js';
import { caller, zodRoutes, type ApiApp, type RouteContext } from './route-context.js';

const conversationParams = z.object({ conversationId: z.string().min(1).max(200) });
const settings = {
  model: z.looseObject({ provider: z.enum(MODEL_PROVIDERS), model: z.string().min(1) }).optional(),
  system: z.string().max(32_000).optional(),
  tools: z.array(z.string().min(1).max(200)).max(500).optional(),
};

function turnOptions(body: { model?: unknown; system?: string; tools?: string[] }): TurnOptions | undefined {
  const options: TurnOptions = {
    ...(body.model ? { model: body.model as ModelSettings } : {}),
    ...(body.system !== undefined ? { system: body.system } : {}),
    ...(body.tools ? { tools: body.tools } : {}),
  };
  return Object.keys(options).length > 0 ? options : undefined;
}

export function registerBranchRoutes(app: ApiApp, { client, access }: RouteContext): void {
  const api = zodRoutes(app);
  const readable = async (request: { caller?: Caller }, conversationId: string) => (await access.mayReadConversation(request.caller!, conversationId)) === true;

  api.post(
    '/api/conversations/:conversationId/regenerate',
    { schema: { params: conversationParams, body: z.object({ turn: z.string().min(1).max(400).optional(), ...settings }).optional() } },
    async (request, reply) => {
      const { conversationId } = request.params;
      if (!(await readable(request, conversationId))) return conversationNotFound(reply, conversationId);
      const { turn, ...rest } = request.body ?? {};
      const options = turnOptions(rest);
      return answer(reply, () => client.regenerate(conversationId, { ...(turn ? { turn } : {}), ...(options ? { options } : {}) }), 202);
    },
  );

  api.post(
    '/api/conversations/:conversationId/messages/:messageId/edit',
    {
      schema: {
        params: conversationParams.extend({ messageId: z.string().min(1).max(200) }),
        body: z.object({ text: z.string().min(1).max(32_000), content: z.array(z.looseObject({ type: z.string() })).max(100).optional(), newMessageId: z.string().min(1).max(200).optional(), ...settings }),
      },
    },
    async (request, reply) => {
      const { conversationId, messageId } = request.params;
      if (!(await readable(request, conversationId))) return conversationNotFound(reply, conversationId);
      const { text, content, newMessageId, ...rest } = request.body;
      const options = turnOptions(rest);
      return answer(
        reply,
        () => client.editMessage(conversationId, { messageId, text, ...(content ? { content: content as unknown as UserContentPart[] } : {}), ...(newMessageId ? { newMessageId } : {}), ...(options ? { options } : {}) }),
        202,
      );
    },
  );

  api.get('/api/conversations/:conversationId/branches', { schema: { params: conversationParams } }, async (request, reply) => {
    const { conversationId } = request.params;
    if (!(await readable(request, conversationId))) return conversationNotFound(reply, conversationId);
    return answer(reply, () => client.branches(conversationId));
  });

  api.post(
    '/api/conversations/:conversationId/branches/:branch/current',
    { schema: { params: conversationParams.extend({ branch: z.string().min(1).max(200) }) } },
    async (request, reply) => {
      const { conversationId, branch } = request.params;
      if (!(await readable(request, conversationId))) return conversationNotFound(reply, conversationId);
      return answer(reply, () => client.switchBranch(conversationId, branch));
    },
  );

  api.post(
    '/api/turns/:turnId/fork',
    { schema: { params: z.object({ turnId: z.string().min(1) }), body: z.object({ atStep: z.number().int().min(1), turnId: z.string().min(1).max(400).optional(), ...settings }) } },
    async (request, reply) => {
      const { turnId } = request.params;
      if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
      const { atStep, turnId: forkId, model, system, tools } = request.body;
      return answer(
        reply,
        () => client.forkTurn(turnId, { atStep, ...(model ? { model: model as ModelSettings } : {}), ...(system !== undefined ? { system } : {}), ...(tools ? { tools } : {}), ...(forkId ? { turnId: forkId } : {}), startedBy: caller(request) }),
        201,
      );
    },
  );

  api.get('/api/turns/:turnId/forks', { schema: { params: z.object({ turnId: z.string().min(1) }) } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
    return answer(reply, async () => ({ forks: await client.forks(turnId) }));
  });

  api.get('/api/turns/:turnId/transcript', { schema: { params: z.object({ turnId: z.string().min(1) }) } }, async (request, reply) => {
    const { turnId } = request.params;
    if (!(await access.mayReadTurn(request.caller!, turnId))) return turnNotFound(reply, turnId);
    return answer(reply, async () => ({ turnId, messages: await client.turnTranscript(turnId) }));
  });
}
