/**
 * A useChat page in a real headless Chromium (the test page of ui-chat-browser.test.ts, through
 * test/support/ui-chat-browser.ts) driving turns on provider `ai-sdk`: the real `@ai-sdk/google`
 * registered on the worker by name, talking HTTP to the strict Gemini fake with thinking on. The
 * page picks the model in its request body (useChat's `body`), shows the streamed answer, an
 * approval request, approves it through the transport, and shows the tool output and the final
 * answer; Gemini gets its thought signature back unchanged after the park. The API reads the
 * turns live, through the worker's in-process live channel.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessLiveDeltas } from '../../activities/live-deltas.js';
import { startFakeGemini, type FakeGemini } from '../fake-provider/gemini.js';
import { executionsOf, testTools } from '../support/test-tools.js';
import { expectStreamedText, recordChatRequests, sendFromPage, startUiChat, type UiChat } from '../support/ui-chat-browser.js';

const GEMINI_KEY = 'gemini-test-SECRET-ui-chat';
/** What the page sends in every request's body: the worker's Gemini model, thinking on. */
const GEMINI_CHAT = { model: { provider: 'ai-sdk', model: 'gemini', providerOptions: { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } } } } };

let gemini: FakeGemini;
let chat: UiChat;

beforeAll(async () => {
  gemini = await startFakeGemini(GEMINI_KEY);
  const google = createGoogleGenerativeAI({ baseURL: gemini.baseURL, apiKey: GEMINI_KEY });
  // The worker and the API share a live channel: the page reads /api/chat live (docs/streaming.md).
  chat = await startUiChat({ tools: testTools, models: { gemini: google('gemini-2.5-flash') }, liveDeltas: new InProcessLiveDeltas() });
});

afterAll(async () => {
  await chat?.stop();
  await gemini?.close();
});

describe('useChat in Chromium on an ai-sdk model (@ai-sdk/google against the Gemini fake)', () => {
  it('shows streamed text, an approval request, approves it through the transport, then the tool output and the final answer', async () => {
    gemini.script([
      { thinking: 'A greeting; no tool needed.', text: 'Hello from Gemini, browser.' },
      { thinking: 'browser-1 needs the guarded action; that is approved by a person.', text: 'Asking for approval first.', toolCalls: [{ name: 'guarded_action', args: { target: 'browser-1', count: 3 } }] },
      { thinking: 'It ran.', text: 'browser-1 is guarded, three times over.' },
    ]);
    const chatId = `chat-${randomUUID()}`;
    const page = await chat.openPage(chatId, { token: 'alice-token', body: GEMINI_CHAT });
    const chatRequests = recordChatRequests(page);
    const messages = page.locator('#messages > li');

    // A first turn: Gemini's text, streamed into the page (an empty text part, then its deltas).
    await sendFromPage(page, 'hello there');
    const firstAnswer = messages.nth(1);
    await firstAnswer.locator('p.text', { hasText: 'Hello from Gemini, browser.' }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    const firstResult = await chat.client.turnResult(`${chatId}/turn-1`);
    expect(firstResult).toMatchObject({ status: 'completed', text: 'Hello from Gemini, browser.' });
    expect(await firstAnswer.locator('p.text').innerText()).toBe(firstResult.text);
    await expectStreamedText(page, firstResult.text);

    // A second turn whose Gemini call needs approval: the page shows the request, the tool has not run.
    await sendFromPage(page, 'Guard browser-1 three times.');
    const tool = messages.nth(3).locator('.tool[data-state="approval-requested"]');
    await tool.waitFor();
    expect(await tool.locator('.tool-name').innerText()).toBe('guarded_action');
    expect(JSON.parse(await tool.locator('.tool-input').innerText())).toEqual({ target: 'browser-1', count: 3 });
    await messages.nth(3).locator('p.text', { hasText: 'Asking for approval first.' }).waitFor();
    const turnId = `${chatId}/turn-2`;
    expect((await chat.client.turnState(turnId)).pending).toHaveLength(1);
    expect(executionsOf(turnId)).toHaveLength(0);
    expect(gemini.requests).toHaveLength(2);

    // Approved from the page: addToolApprovalResponse, sent back by sendAutomaticallyWhen.
    await tool.locator('button.approve').click();
    const done = messages.nth(3).locator('.tool[data-state="output-available"]');
    await done.waitFor();
    expect(JSON.parse(await done.locator('.tool-output').innerText())).toEqual({ guarded: 'browser-1', count: 3 });
    const result = await chat.client.turnResult(turnId);
    expect(result).toMatchObject({ status: 'completed', steps: 2, text: 'browser-1 is guarded, three times over.' });
    await messages.nth(3).locator('p.text', { hasText: result.text }).waitFor();
    await page.locator('#status[data-status="ready"]').waitFor();
    expect(await messages.count()).toBe(4);
    expect(result.toolCalls).toHaveLength(1);
    expect(result.toolCalls[0]).toMatchObject({ toolName: 'guarded_action', outcome: 'approved', approval: { approved: true, approver: 'alice', automatic: false } });
    expect(executionsOf(turnId)).toMatchObject([{ toolName: 'guarded_action', input: { target: 'browser-1', count: 3 }, attempt: 1 }]);
    expect(chatRequests.map((request) => request.lastRole)).toEqual(['user', 'user', 'assistant']);
    expect(chatRequests[2].lastParts.find((part) => part.type === 'tool-guarded_action')).toMatchObject({ state: 'approval-responded', approval: { approved: true } });

    // Every step went to Gemini, streamed, and the strict fake accepted each request; the one
    // after the park carried the conversation so far and the signed call's signature unchanged.
    expect(gemini.requests.map((request) => [request.model, request.stream, request.status, request.errors])).toEqual([
      ['gemini-2.5-flash', true, 200, []],
      ['gemini-2.5-flash', true, 200, []],
      ['gemini-2.5-flash', true, 200, []],
    ]);
    const signedCall = gemini.requests[1].reply!.flatMap((chunk) => chunk.candidates[0].content.parts).find((part) => part.functionCall);
    expect(signedCall.thoughtSignature).toEqual(expect.any(String));
    const contents = gemini.requests[2].body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
    expect(contents.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user']);
    expect(contents[3].parts).toContainEqual({ functionCall: expect.objectContaining({ name: 'guarded_action', args: { target: 'browser-1', count: 3 } }), thoughtSignature: signedCall.thoughtSignature });
    expect(contents[4].parts[0].functionResponse).toMatchObject({ name: 'guarded_action' });
    expect(page.errors).toEqual([]);
    await page.close();
  });
});
