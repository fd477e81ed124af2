/**
 * The named agents the HTTP API serves over A2A (`buildApi({ a2a: { agents } })`): each is a
 * turn's settings (model, system prompt, tools) under a name, published with an Agent Card at
 * `/api/a2a/<name>/.well-known/agent-card.json` and answering JSON-RPC at `/api/a2a/<name>`.
 * No import of the optional `@a2a-js/sdk` here, so that `ApiOptions` names none of its types.
 */
import { checkAgentNames, publishedAgentsFromEnvironment, type PublishedAgent } from '../published-agents.js';
import { checkedPushAllowList, pushAllowFromEnvironment } from '../../activities/a2a-push/receiver-addresses.js';
import type { A2aPushJwk } from '../../activities/a2a-push/push-jwt-key.js';
import { checkedPushKeys, pushKeysFromEnvironment } from './a2a-push-jwks.js';

/** One agent served over A2A: what each of its tasks (turns) runs with (A2A carries no typed answer). */
export type A2aAgent = Omit<PublishedAgent, 'output'>;

export interface A2aOptions {
  /** Agent name → its settings. Names are 1 to 64 letters, digits, `-` and `_`. */
  agents: Record<string, A2aAgent>;
  /**
   * The URL callers reach this API at (e.g. `https://turnpike.example.com`), written into each
   * Agent Card's interface URL. Default: the request's own `Host` and protocol.
   */
  publicUrl?: string;
  /** The card's `version`. Default `'1.0.0'`. */
  version?: string;
  /**
   * Push notifications (A2A's `CreateTaskPushNotificationConfig` and the rest), each config sent
   * by a durable `a2aPushNotifier` workflow that the turns' workers run (docs/protocols.md).
   * Default true; false answers them `PushNotificationNotSupportedError`, and the Agent Card says
   * `pushNotifications: false`. Turn it off while workers older than the notifier serve the queue.
   */
  pushNotifications?: boolean;
  /**
   * The push receivers on private networks callers may register: CIDRs (`10.0.0.0/8`,
   * `fd00::/8`), addresses, or host names (`hooks.internal`, `localhost`). A push config whose URL's
   * host is any other loopback, private, link-local, unique-local, CGNAT, multicast, unspecified
   * or reserved address, or `localhost` (or a name under it), is refused with
   * `RequestMalformedError`. Names are not resolved here: the workers check the address they
   * connect to, with their own allow-list (`TurnpikePluginOptions.a2aPushAllow`). Default: none.
   */
  pushAllow?: readonly string[];
  /**
   * The public keys of the JWTs the workers sign push notifications with
   * (`TurnpikePluginOptions.a2aPushSigningKey`): SPKI PEMs or public JWKs (EC P-256/384/521, RSA,
   * Ed25519), each under its JWK's `kid`, else its RFC 7638 thumbprint (the workers' default kid).
   * Published at `/api/a2a/.well-known/jwks.json` (public), which each Agent Card names (extension
   * `urn:turnpike:a2a:push-jwt:v1`, `params.jwksUrl`). To rotate, list the new key beside the old
   * one. A private key, a symmetric key or a kid given twice is refused as the API is built.
   * Default: none, no JWKS is served, and the cards name none.
   */
  pushKeys?: ReadonlyArray<string | A2aPushJwk>;
}

/** Where the agents live under the API: `/api/a2a/<name>`. */
export const A2A_BASE_PATH = '/api/a2a';

/** Refuses agent names a URL path or a turn id could not carry, before anything is served. */
export function checkA2aOptions(options: A2aOptions): void {
  checkAgentNames('a2a', options.agents);
  checkedPushAllowList(options.pushAllow, 'a2a.pushAllow');
  checkedPushKeys(options.pushKeys, 'a2a.pushKeys');
}

/**
 * `npm run api`'s agents: `TURNPIKE_A2A_AGENTS` (JSON, name → `{ description, model: { provider,
 * model }, system?, tools?, maxSteps?, approvalTimeout? }`), `TURNPIKE_A2A_PUBLIC_URL`,
 * `TURNPIKE_A2A_PUSH_ALLOW` (comma-separated, as the workers read it) and `TURNPIKE_A2A_PUSH_JWKS`
 * (the push JWTs' public keys, a JWKS as JSON).
 * Undefined when no agents are named; a malformed value is refused with the reason.
 */
export function a2aOptionsFromEnvironment(env: NodeJS.ProcessEnv = process.env): A2aOptions | undefined {
  const agents = publishedAgentsFromEnvironment('TURNPIKE_A2A_AGENTS', env);
  if (!agents) return undefined;
  const pushAllow = pushAllowFromEnvironment(env);
  const pushKeys = pushKeysFromEnvironment(env);
  const options: A2aOptions = { agents, ...(env.TURNPIKE_A2A_PUBLIC_URL ? { publicUrl: env.TURNPIKE_A2A_PUBLIC_URL } : {}), ...(pushAllow ? { pushAllow } : {}), ...(pushKeys ? { pushKeys } : {}) };
  checkA2aOptions(options);
  return options;
}
