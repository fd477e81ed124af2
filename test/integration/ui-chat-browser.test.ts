/**
 * `POST /api/chat` driven from a real headless Chromium (Debian's, via playwright-core) by the
 * `ai` package's own chat client (`AbstractChat` + `DefaultChatTransport`, configured as
 * `useChat` is for tool approvals), bundled by esbuild from test/support/ui-chat-page/ and served
 * from the API's origin: the page shows the streamed answer, an approval request, sends the
 * approval back with `addToolApprovalResponse`, and shows the tool output and the final answer;
 * it shows a budget approval (`data-budget`) decided from the page and a typed answer's object
 * (`data-output`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { expectStreamedText, recordChatRequests, sendFromPage, startUiChat, type UiChat } from '../support/ui-chat-browser.js';

let chat: UiChat;
let client: TurnpikeClient;

beforeAll(async () => {
  chat = await startUiChat({ tools: testTools });
  client = chat.client;
});

afterAll(async () => {
  await chat?.stop();
});

describe('useChat client in Chromium', () => {
  it('shows streamed text, an approval request, approves it through the transport, then the tool output and the final answer', async () => {
    const chatId = `chat-${randomUUID()}`;
    const page = await chat.openPage(chatId, { token: 'alice-token' });
    const chatRequests = recordChatRequests(page);
    const messages = page.locator('#messages > li');

    // A first turn: plain text, streamed into the page as the model's text deltas arrive.
    await sendFromPage(page, 'hello there');
    const firstAnswer = messages.nth(1);
    await firstAnswer.locator('p.text', { hasText: 'You said: "hello there"' }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    const firstResult = await client.turnResult(`${chatId}/turn-1`);
    expect(await firstAnswer.getAttribute('data-role')).toBe('assistant');
    expect(await firstAnswer.locator('p.text').innerText()).toBe(firstResult.text);
    // The page built the answer from the stream.
    await expectStreamedText(page, firstResult.text);

    // A second turn whose tool needs approval: the page shows the request and the tool has not run.
    await sendFromPage(page, use('guarded_action', { target: 'browser-1', count: 3 }));
    const tool = messages.nth(3).locator('.tool[data-state="approval-requested"]');
    await tool.waitFor();
    expect(await tool.locator('.tool-name').innerText()).toBe('guarded_action');
    expect(JSON.parse(await tool.locator('.tool-input').innerText())).toEqual({ target: 'browser-1', count: 3 });
    const turnId = `${chatId}/turn-2`;
    expect((await client.turnState(turnId)).pending).toHaveLength(1);
    expect(executionsOf(turnId)).toHaveLength(0);

    // The click goes through addToolApprovalResponse; sendAutomaticallyWhen sends it back.
    await tool.locator('button.approve').click();
    const done = messages.nth(3).locator('.tool[data-state="output-available"]');
    await done.waitFor();
    expect(JSON.parse(await done.locator('.tool-output').innerText())).toEqual({ guarded: 'browser-1', count: 3 });
    const result = await client.turnResult(turnId);
    await messages.nth(3).locator('p.text', { hasText: result.text }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    // The continuation is appended to the same assistant message, as useChat shows it.
    expect(await messages.count()).toBe(4);
    expect(result.text).toMatch(/^Done\. /);
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'guarded_action', outcome: 'approved', approval: { approved: true, approver: 'alice', automatic: false } });
    expect(executionsOf(turnId)).toMatchObject([{ toolName: 'guarded_action', input: { target: 'browser-1', count: 3 }, attempt: 1 }]);

    // What went over the wire: two user messages, then the approval as useChat sends it.
    expect(chatRequests.map((request) => request.lastRole)).toEqual(['user', 'user', 'assistant']);
    expect(chatRequests[2].lastParts.find((part) => part.type === 'tool-guarded_action')).toMatchObject({ state: 'approval-responded', approval: { approved: true } });
    expect(page.errors).toEqual([]);
    await page.close();
  });

  it('shows a budget approval, extends it from the page, and shows the decision in its place; shows a typed answer as its object', async () => {
    const chatId = `chat-${randomUUID()}`;
    const page = await chat.openPage(chatId, { token: 'alice-token', body: { budget: { totalTokens: 30 } } });
    await sendFromPage(page, 'look up order 1001 then look up order 1002');
    const answer = page.locator('#messages > li').nth(1);
    const requested = answer.locator('.budget[data-state="requested"]');
    await requested.waitFor();
    const turnId = `${chatId}/turn-1`;
    const [pending] = (await client.turnState(turnId)).pending;
    expect(await requested.getAttribute('data-approval-id')).toBe(pending.approvalId);
    expect(JSON.parse(await requested.locator('.budget-extend-by').innerText())).toEqual({ totalTokens: 30 });

    // The click sets the part to responded and sends the messages again (sendMessage()).
    await requested.locator('button.extend').click();
    await answer.locator('.budget[data-state="decided"] .budget-outcome', { hasText: 'approved' }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    const result = await client.turnResult(turnId);
    expect(result).toMatchObject({ status: 'completed', budget: { totalTokens: 1030 } });
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'approved', approver: 'alice' })]);
    await answer.locator('p.text', { hasText: result.text }).waitFor();
    expect(JSON.parse(await answer.locator('.budget-extend-by').innerText())).toEqual({ totalTokens: 1000 });
    // One budget part, decided in place, and no tool part for it.
    expect(await answer.locator('.budget').count()).toBe(1);
    expect(await answer.locator('.tool-name', { hasText: 'turnpike_budget' }).count()).toBe(0);
    await page.close();

    // A typed answer: the page renders the data-output part, streaming, then the validated object.
    const typedBody = { output: { schema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } }, required: ['city', 'days'], additionalProperties: false } } };
    const typedPage = await chat.openPage(`chat-${randomUUID()}`, { token: 'alice-token', body: typedBody });
    await sendFromPage(typedPage, 'answer with {"city": "Lisbon", "days": 4}');
    const output = typedPage.locator('#messages > li').nth(1).locator('pre.output[data-state="done"]');
    await output.waitFor();
    expect(JSON.parse(await output.innerText())).toEqual({ city: 'Lisbon', days: 4 });
    const shownOutputs = (await typedPage.evaluate('window.shownOutputs')) as Array<{ state: string }>;
    expect(shownOutputs[0]).toEqual({ state: 'streaming' });
    expect(shownOutputs.at(-1)).toEqual({ state: 'done', output: { city: 'Lisbon', days: 4 } });
    expect(page.errors).toEqual([]);
    expect(typedPage.errors).toEqual([]);
    await typedPage.close();
  });

  it('works from the sign-in session cookie, with its CSRF token and no bearer token', async () => {
    const chatId = `chat-${randomUUID()}`;
    const page = await chat.browser.newPage();
    await page.goto(`${chat.baseUrl}/`);
    // The dashboard's token exchange: the page gets a session cookie, and keeps no token.
    await page.evaluate(`fetch('/auth/token', { method: 'POST', headers: { authorization: 'Bearer alice-token' } })`);
    const authorizations: Array<string | undefined> = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/chat')) authorizations.push(request.headers().authorization);
    });
    await page.goto(`${chat.baseUrl}/ui-chat/?chat=${encodeURIComponent(chatId)}`);
    await sendFromPage(page, use('guarded_action', { target: 'by-cookie', count: 1 }));
    const tool = page.locator('#messages > li').nth(1).locator('.tool[data-state="approval-requested"]');
    await tool.waitFor();
    await tool.locator('button.approve').click();
    await page.locator('#messages > li').nth(1).locator('.tool[data-state="output-available"]').waitFor();
    const result = await client.turnResult(`${chatId}/turn-1`);
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approver: 'alice' } });
    expect(authorizations).toEqual([undefined, undefined]);
    await page.close();
  });
});
