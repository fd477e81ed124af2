/**
 * The HTTP API with tokens from an identity provider: a local JWKS server and real signed
 * JWTs. Good tokens name the approver (and groups) that decisions carry; expired, wrong
 * audience, wrong issuer, unknown key, `alg: none` and tampered tokens are refused with 401.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../../api/index.js';
import { TurnpikeClient } from '../../client/index.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

let turnpike: TurnpikeHarness;
let idp: IdentityProvider;
let api: FastifyInstance;

beforeAll(async () => {
  [turnpike, idp] = await Promise.all([startTurnpike({ tools: testTools }), startIdentityProvider()]);
  api = await buildApi({
    client: new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue }),
    oidc: { jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience },
  });
});
afterAll(async () => {
  await api?.close();
  await idp?.close();
  await turnpike?.stop();
});

async function me(token: string) {
  const response = await api.inject({ url: '/api/me', headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, body: response.json() };
}

describe('tokens from an identity provider', () => {
  it('accepts a signed token and takes the approver identity and groups from its claims', async () => {
    const token = await idp.sign({ sub: 'u-1', email: 'alice', groups: ['finance', 'ops'] });
    expect(await me(token)).toEqual({ status: 200, body: { identity: 'alice', groups: ['finance', 'ops'] } });
    expect(await me(await idp.sign({ sub: 'u-2' }))).toEqual({ status: 200, body: { identity: 'u-2', groups: [] } });
  });

  it.each([
    ['expired', () => idp.sign({ sub: 'u-1', email: 'alice' }, { expiresIn: Math.floor(Date.now() / 1000) - 120 })],
    ['for another audience', () => idp.sign({ sub: 'u-1', email: 'alice' }, { audience: 'someone-else' })],
    ['from another issuer', () => idp.sign({ sub: 'u-1', email: 'alice' }, { issuer: 'https://evil.example/' })],
    ['signed by a key the provider does not publish', () => idp.signWithUnknownKey({ sub: 'u-1', email: 'alice' })],
    ['unsigned (alg: none)', async () => idp.unsigned({ sub: 'u-1', email: 'alice' })],
    ['with a tampered payload', async () => {
      const [header, , signature] = (await idp.sign({ sub: 'u-1', email: 'mallory' })).split('.');
      const forged = Buffer.from(JSON.stringify({ sub: 'u-1', email: 'alice', iss: idp.issuer, aud: idp.audience, exp: 4_000_000_000 })).toString('base64url');
      return `${header}.${forged}.${signature}`;
    }],
    ['that is not a JWT at all', async () => 'not-a-token'],
  ])('refuses a token %s with 401', async (_kind, token) => {
    const response = await me(await token());
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ error: { type: 'Unauthorized' } });
  });

  it('decides in the token\'s name: an allowed approver\'s approval runs the tool, anyone else is refused by the workflow', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'prod', count: 1 }) });
    const [pending] = await waitForPending(handle);
    const decide = async (email: string) =>
      api.inject({
        method: 'POST',
        url: `/api/turns/${encodeURIComponent(handle.workflowId)}/approvals/${pending.approvalId}`,
        headers: { authorization: `Bearer ${await idp.sign({ sub: email, email })}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ approved: true }),
      });
    const refused = await decide('mallory');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ error: { type: 'ApproverNotAllowed' } });
    const accepted = await decide('bob');
    expect(accepted.statusCode).toBe(200);
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'bob' } }]);
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
  });
});
