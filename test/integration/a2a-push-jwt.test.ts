/**
 * JWT-signed A2A push notifications, checked from outside as a receiver would: the worker signs
 * with its key (kid `push-2026-12`), the API publishes it beside an older one (a rotation) at the
 * JWKS URL its Agent Card names, and a local receiver fetches that JWKS with `jose`'s
 * `createRemoteJWKSet` (through `verifyA2aPush`, and once more with `jwtVerify` directly). Real
 * notifications of a task parked for approval pass; a token signed with another key, a body sent
 * with another task's token, an expired token, a token sent twice and one for another receiver
 * are refused by that receiver's check.
 */
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Role, StreamResponse, TaskState, type Message, type Task, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyA2aPush } from '../../index.js';
import { A2A_PUSH_JWT_EXTENSION } from '../../api/a2a/a2a-push-jwks.js';
import { parseTokenMap } from '../../api/auth.js';
import { a2aPushNotifierId } from '../../workflows/a2a/a2a-push-notifier.js';
import { serveApi, type ServedApi } from '../support/api-server.js';
import { noteStarted } from '../support/history-recorder.js';
import { startPushReceiver, type PushReceiver, type ReceivedNotification } from '../support/push-receiver.js';
import { testTools, use } from '../support/test-tools.js';
import { startTurnpike, type TurnpikeHarness } from '../support/turnpike-harness.js';
import { until } from '../support/until.js';

const current = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const older = generateKeyPairSync('ed25519');
const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const KID = 'push-2026-12';
const tokens = parseTokenMap('alice-token:alice');
const desk = { description: 'Answers and acts on orders', model: { provider: 'scripted' as const, model: 'demo' }, tools: ['record_action', 'guarded_action'] };

let turnpike: TurnpikeHarness;
let served: ServedApi;
let unsigned: ServedApi;
let alice: Client;
let jwksUrl: string;
const receivers: PushReceiver[] = [];
/** Every jti a receiver took, as a receiver keeps them until they expire. */
const seenJtis = new Set<string>();

beforeAll(async () => {
  turnpike = await startTurnpike({ tools: testTools, a2aPushAllow: ['127.0.0.1/32'], a2aPushSigningKey: { key: current.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), kid: KID } });
  const pushKeys = [{ ...older.publicKey.export({ format: 'jwk' }), kty: 'OKP', kid: 'push-2026-06' }, { ...current.publicKey.export({ format: 'jwk' }), kty: 'EC', kid: KID }];
  served = await serveApi(turnpike, { tokens, a2a: { agents: { desk }, pushAllow: ['127.0.0.1/32'], pushKeys } });
  unsigned = await serveApi(turnpike, { tokens, a2a: { agents: { desk } } });
  const authorized: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: 'Bearer alice-token' } });
  alice = await new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl: authorized })] }).createFromUrl(`${served.base}/api/a2a/desk/`);
});
afterAll(async () => {
  await served?.api.close();
  await unsigned?.api.close();
  await turnpike?.stop();
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

/** The receiver's check: the JWT against the published keys, for this receiver, each jti once. */
function jwtCheck(audience: () => string) {
  return async (text: string, headers: IncomingHttpHeaders) => {
    const verdict = await verifyA2aPush({ jwksUrl, body: text, headers, audience: audience(), seen: (jti) => seenJtis.has(jti) || (seenJtis.add(jti), false) });
    return verdict.ok ? undefined : verdict.reason;
  };
}

async function receiver(token: string): Promise<PushReceiver> {
  let url = '';
  const started = await startPushReceiver(() => token, { check: jwtCheck(() => url) });
  url = started.url;
  receivers.push(started);
  return started;
}

function message(target: string): Message {
  const text = use('guarded_action', { target, count: 1 });
  return { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

async function parkedTask(target: string): Promise<Task> {
  const task = (await alice.sendMessage({ tenant: '', message: message(target), configuration: undefined, metadata: undefined })) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  return task;
}

function config(taskId: string, url: string, more: Partial<TaskPushNotificationConfig>): TaskPushNotificationConfig {
  return { tenant: '', id: '', taskId, url, token: '', authentication: undefined, ...more };
}


function state(taken: ReceivedNotification): string {
  const response = StreamResponse.fromJSON(taken.body);
  return response.payload?.$case === 'statusUpdate' ? TaskState[response.payload.value.status!.state] : String(response.payload?.$case);
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const jwtOf = (taken: ReceivedNotification) => String(taken.headers['x-turnpike-jwt']);

/** The first task's notifications to its two receivers, for the forgeries below. */
let first: { task: Task; plain: PushReceiver; authenticated: PushReceiver };

describe('JWT-signed A2A push notifications', () => {
  it('names the JWKS in the Agent Card, and publishes both keys there, public, without their private parts; an API given no keys names and serves none', async () => {
    const card = await alice.getAgentCard();
    const extension = card.capabilities?.extensions.find((each) => each.uri === A2A_PUSH_JWT_EXTENSION);
    expect(extension?.params).toEqual({ jwksUrl: `${served.base}/api/a2a/.well-known/jwks.json`, header: 'x-turnpike-jwt', algorithms: ['ES256', 'ES384', 'ES512', 'RS256', 'EdDSA'] });
    jwksUrl = String(extension!.params!.jwksUrl);
    const answer = await fetch(jwksUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('application/jwk-set+json');
    const { keys } = (await answer.json()) as { keys: Array<Record<string, unknown>> };
    expect(keys.map((key) => [key.kid, key.alg, key.use])).toEqual([['push-2026-06', 'EdDSA', 'sig'], [KID, 'ES256', 'sig']]);
    expect(keys.some((key) => 'd' in key)).toBe(false);
    const plainCard = (await (await fetch(`${unsigned.base}/api/a2a/desk/.well-known/agent-card.json`)).json()) as { capabilities: { extensions?: unknown[] } };
    expect(plainCard.capabilities.extensions ?? []).toEqual([]);
    expect((await fetch(`${unsigned.base}/api/a2a/.well-known/jwks.json`)).status).toBe(404);
  });

  it('signs every real notification: the receiver\'s check takes each, its token verifies with createRemoteJWKSet, names the task and the body\'s SHA-256, and lives 5 minutes', async () => {
    const task = await parkedTask('jwt-1');
    const plain = await receiver('plain-token');
    const authenticated = await receiver('auth-token');
    first = { task, plain, authenticated };
    await alice.createTaskPushNotificationConfig(config(task.id, plain.url, { id: 'plain', token: 'plain-token' }));
    await alice.createTaskPushNotificationConfig(config(task.id, authenticated.url, { id: 'authenticated', token: 'auth-token', authentication: { scheme: 'Bearer', credentials: 'receiver-secret' } }));
    await until(() => plain.taken.length >= 1 && authenticated.taken.length >= 1, 'the input-required notifications');
    const approvalId = (task.status!.message!.parts.find((part) => part.content?.$case === 'data')!.content as { value: { waiting: { approvalId: string }[] } }).value.waiting[0]!.approvalId;
    await served.client.approveToolCall(task.id, { approvalId, approved: true, approver: 'alice' });
    for (const id of ['plain', 'authenticated']) {
      const handle = turnpike.client.workflow.getHandle(a2aPushNotifierId(task.id, id));
      noteStarted(handle);
      expect(await handle.result()).toMatchObject({ dropped: 0 });
    }
    for (const each of [plain, authenticated]) {
      expect(each.attempts.every((attempt) => attempt.status === 200), JSON.stringify(each.attempts)).toBe(true);
      expect(each.taken.map(state).filter((what) => what !== 'TASK_STATE_WORKING')).toEqual(['TASK_STATE_INPUT_REQUIRED', 'artifactUpdate', 'TASK_STATE_COMPLETED']);
    }
    // Where the token is: X-Turnpike-Jwt always; Authorization too, unless the config has its own.
    for (const taken of plain.taken) expect(taken.headers.authorization).toBe(`Bearer ${jwtOf(taken)}`);
    for (const taken of authenticated.taken) expect(taken.headers.authorization).toBe('Bearer receiver-secret');
    // A receiver with jose alone, no turnpike.
    const keys = createRemoteJWKSet(new URL(jwksUrl));
    const jtis = new Set<string>();
    for (const [each, url] of [[plain, plain.url], [authenticated, authenticated.url]] as const) {
      for (const taken of each.taken) {
        expect(taken.headers['x-turnpike-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
        const { payload, protectedHeader } = await jwtVerify(jwtOf(taken), keys, { audience: url, maxTokenAge: 300 });
        expect(protectedHeader).toEqual({ alg: 'ES256', kid: KID, typ: 'JWT' });
        expect(payload).toMatchObject({ taskId: task.id, request_body_sha256: sha256(taken.text) });
        expect(payload.exp! - payload.iat!).toBe(300);
        jtis.add(payload.jti!);
      }
    }
    expect(jtis.size).toBe(plain.taken.length + authenticated.taken.length);
  });

  it('refuses, by the receiver\'s check: a token signed with another key, a body sent with another task\'s token, an expired token, a token sent twice, one for another receiver', async () => {
    const check = (taken: Pick<ReceivedNotification, 'text' | 'headers'>, audience: string) => jwtCheck(() => audience)(taken.text, taken.headers);
    const { plain, authenticated } = first;
    const [notification] = plain.taken;
    // Another task's notification, with its own (valid) token.
    const other = await parkedTask('jwt-2');
    const otherReceiver = await receiver('other-token');
    await alice.createTaskPushNotificationConfig(config(other.id, otherReceiver.url, { id: 'other', token: 'other-token' }));
    await until(() => otherReceiver.taken.length >= 1, 'the other task\'s notification');
    const otherToken = jwtOf(otherReceiver.taken[0]!);
    const withToken = (token: string) => ({ ...notification!.headers, 'x-turnpike-jwt': token, authorization: `Bearer ${token}` });
    const now = Math.floor(Date.now() / 1000);
    const claims = { taskId: first.task.id, request_body_sha256: sha256(notification!.text) };
    const signed = (key: typeof current.privateKey, iat: number, kid = KID) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).setIssuedAt(iat).setExpirationTime(iat + 300).setJti(randomUUID()).setAudience(plain.url).sign(key);

    expect(await check({ text: notification!.text, headers: withToken(await signed(forger.privateKey, now)) }, plain.url)).toBe('signature does not match');
    expect(await check({ text: notification!.text, headers: withToken(await signed(forger.privateKey, now, 'unknown-kid')) }, plain.url)).toBe('no published key has its kid');
    // Signed by turnpike, for the other receiver (its audience): the body it signed is not this one.
    expect(await check({ text: notification!.text, headers: withToken(otherToken) }, otherReceiver.url)).toBe('body hash does not match');
    expect(await check({ text: notification!.text, headers: withToken(await signed(current.privateKey, now - 600)) }, plain.url)).toBe('token expired');
    // The same token as the first delivery: taken once already.
    expect(await check(notification!, plain.url)).toBe('token replayed');
    // A fresh token of the right key, but its audience is the other receiver.
    expect(await check({ text: notification!.text, headers: withToken(await signed(current.privateKey, now)) }, authenticated.url)).toMatch(/^token refused: unexpected "aud" claim value/);
    expect(await check({ text: notification!.text, headers: {} }, plain.url)).toBe('no token');
    // The same body and a good, fresh token pass: the refusals above are the forgeries', not the check's.
    expect(await check({ text: notification!.text, headers: withToken(await signed(current.privateKey, now)) }, plain.url)).toBeUndefined();
    expect(await verifyA2aPush({ jwksUrl, body: notification!.text, headers: withToken(await signed(current.privateKey, now)), taskId: other.id })).toEqual({ ok: false, reason: 'taskId is not the one expected' });
    // Keys it cannot fetch (nothing listens; an API that publishes none answers 404): it cannot check, and throws (the receiver answers 503, turnpike retries).
    const fresh = { jwksUrl: 'http://127.0.0.1:9/jwks.json', body: notification!.text, headers: withToken(await signed(current.privateKey, now)) };
    await expect(verifyA2aPush(fresh)).rejects.toThrow();
    await expect(verifyA2aPush({ ...fresh, jwksUrl: `${unsigned.base}/api/a2a/.well-known/jwks.json` })).rejects.toThrow(/Expected 200 OK/);
    await alice.cancelTask({ tenant: '', id: other.id, metadata: undefined });
  });
});
