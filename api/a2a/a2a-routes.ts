/**
 * The A2A endpoints of the HTTP API, on the official `@a2a-js/sdk` (an optional peer, loaded only
 * when `buildApi` is given `a2a`): for each named agent, its Agent Card at
 * `GET /api/a2a/<name>/.well-known/agent-card.json` (public, as discovery is) and JSON-RPC at
 * `POST /api/a2a/<name>`, authenticated as every /api/ route is (bearer token, OIDC, or the
 * dashboard's session). The SDK's `JsonRpcTransportHandler` reads the JSON-RPC request and writes
 * the answer or the SSE stream; turnpike's handler (a2a-request-handler.ts) does the work.
 */
import { A2A_VERSION_HEADER, AgentCard, formatSSEErrorEvent, formatSSEEvent, type AgentCard as Card } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { zodRoutes, type ApiApp, type RouteContext } from '../route-context.js';
import { openEventStream } from '../sse.js';
import { A2A_BASE_PATH, type A2aAgent, type A2aOptions } from './a2a-agents.js';
import { AGENT_NAME } from '../published-agents.js';
import { CALLER_KEY, SIGNAL_KEY, TurnpikeA2aHandler } from './a2a-request-handler.js';
import { A2aPushConfigs } from './a2a-push-configs.js';
import { checkedPushAllowList } from '../../activities/a2a-push/receiver-addresses.js';
import { A2A_PUSH_JWKS_PATH, checkedPushKeys, pushJwks, pushJwtExtension } from './a2a-push-jwks.js';
import { A2A_INPUT_MODES } from './a2a-parts.js';

const agentParams = z.object({ agent: z.string().regex(AGENT_NAME) });

/** `base`: the API's URL, when its push notifications carry a JWT whose keys it publishes (the card names them). */
function agentCard(name: string, agent: A2aAgent, url: string, version: string, pushNotifications: boolean, jwksBase: string | undefined): Card {
  return {
    name,
    description: agent.description,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version,
    capabilities: { streaming: true, pushNotifications, extensions: jwksBase !== undefined ? [pushJwtExtension(jwksBase)] : [], extendedAgentCard: false },
    securitySchemes: { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'A bearer token this API accepts (a JWT of its identity provider, or a static token)', scheme: 'Bearer', bearerFormat: '' } } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: [...A2A_INPUT_MODES],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{ id: name, name, description: agent.description, tags: ['turnpike'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

function apiBase(request: FastifyRequest, options: A2aOptions): string {
  return options.publicUrl?.replace(/\/$/, '') ?? `${request.protocol}://${request.host}`;
}

export function registerA2aRoutes(app: ApiApp, routes: RouteContext, options: A2aOptions): void {
  const api = zodRoutes(app);
  const version = options.version ?? '1.0.0';
  const pushNotifications = options.pushNotifications ?? true;
  const pushConfigs = pushNotifications ? new A2aPushConfigs(routes.client, checkedPushAllowList(options.pushAllow, 'a2a.pushAllow')) : undefined;
  const pushKeys = pushNotifications ? checkedPushKeys(options.pushKeys, 'a2a.pushKeys') : [];
  const handlerFor = (request: FastifyRequest, name: string) => {
    const agent = options.agents[name];
    const base = apiBase(request, options);
    return agent ? new TurnpikeA2aHandler(routes, name, agent, agentCard(name, agent, `${base}${A2A_BASE_PATH}/${name}`, version, pushNotifications, pushKeys.length > 0 ? base : undefined), pushConfigs) : undefined;
  };

  // The push JWTs' public keys, public as the cards are (the server's auth hook lets it through).
  if (pushKeys.length > 0) {
    const document = pushJwks(pushKeys);
    api.get(A2A_PUSH_JWKS_PATH, {}, async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type('application/jwk-set+json').send(document));
  }

  api.get(`${A2A_BASE_PATH}/:agent/.well-known/agent-card.json`, { schema: { params: agentParams } }, async (request, reply) => {
    const handler = handlerFor(request, request.params.agent);
    if (!handler) return reply.status(404).send({ error: { type: 'NotFound', message: `No agent ${JSON.stringify(request.params.agent)} is served` } });
    return reply.header('cache-control', 'no-cache').send(AgentCard.toJSON(await handler.getAgentCard()));
  });

  api.post(`${A2A_BASE_PATH}/:agent`, { schema: { params: agentParams } }, async (request, reply) => {
    const handler = handlerFor(request, request.params.agent);
    if (!handler) return reply.status(404).send({ error: { type: 'NotFound', message: `No agent ${JSON.stringify(request.params.agent)} is served` } });
    const body = request.body as { id?: unknown } | undefined;
    const id = typeof body?.id === 'string' || typeof body?.id === 'number' ? body.id : null;
    // The stream ends when the caller goes: the turn's event reader stops with it.
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const context = new ServerCallContext({
      user: { isAuthenticated: true, userName: request.caller!.identity },
      requestedVersion: headerValue(request, A2A_VERSION_HEADER) ?? '0.3',
      state: new Map<string, unknown>([[CALLER_KEY, request.caller!], [SIGNAL_KEY, gone.signal]]),
    });
    try {
      validateVersion(context.requestedVersion, await handler.getAgentCard(), 'JSONRPC');
    } catch (error) {
      return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    const answer = await new JsonRpcTransportHandler(handler).handle(request.body as Record<string, unknown>, context);
    if (!isStream(answer)) return reply.send(answer);
    // The first event is read before the stream opens, so that a refusal is a plain JSON-RPC error.
    const iterator = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (error) {
      return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    const response = openEventStream(reply);
    try {
      for (let next = first; !next.done; next = await iterator.next()) response.write(formatSSEEvent(next.value));
    } catch (error) {
      if (!gone.signal.aborted) response.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
    } finally {
      response.end();
    }
  });
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function isStream(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as AsyncGenerator<unknown> | undefined)?.[Symbol.asyncIterator] === 'function';
}
