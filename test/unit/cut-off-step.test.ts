/** What a turn does with a model step that did not finish, and how the CLI shows it. */
import { describe, expect, it } from 'vitest';
import { cutOffText, status, turnResultText } from '../../cli/format.js';
import picocolors from 'picocolors';
import { cutOffSettlement, cutOffStatus, hasContent } from '../../workflows/turn/cut-off-step.js';
import type { AgentTurnResult } from '../../workflows/types/index.js';

const plain = picocolors.createColors(false);

describe('a cut-off step', () => {
  it('ends the turn as max-tokens on length and refused on content-filter; other finish reasons do not end it', () => {
    expect(cutOffStatus('length')).toBe('max-tokens');
    expect(cutOffStatus('content-filter')).toBe('refused');
    for (const reason of ['stop', 'tool-calls', 'other'] as const) expect(cutOffStatus(reason)).toBeUndefined();
  });

  it('answers each of its tool calls with a cancelled result that says the call did not run', () => {
    expect(cutOffSettlement('max-tokens', { toolName: 'issue_refund' })).toEqual({
      outcome: 'cancelled',
      isError: true,
      output: 'The reply was cut off by the output token limit while it held this call to "issue_refund", so the call may be incomplete; it did not run.',
    });
    expect(cutOffSettlement('refused', { toolName: 'issue_refund' }).output).toMatch(/refusal or content filter .* "issue_refund"; it did not run/);
  });

  it('keeps a reply with text or a tool call, and drops one with nothing in it', () => {
    expect(hasContent({ role: 'assistant', content: [{ type: 'text', text: 'Part' }] })).toBe(true);
    expect(hasContent({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: '{"a' }] })).toBe(true);
    expect(hasContent({ role: 'assistant', content: [] })).toBe(false);
    expect(hasContent({ role: 'assistant', content: [{ type: 'text', text: '  ' }] })).toBe(false);
  });

  it('keeps a reply whose only content is a hosted call, even one cut off before its result', () => {
    const failed = { type: 'provider-tool' as const, provider: 'anthropic' as const, toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'fee' }, raw: [], isError: true, output: 'the response ended before the tool returned a result' };
    expect(hasContent({ role: 'assistant', content: [failed] })).toBe(true);
  });
});

describe('the CLI', () => {
  const result: AgentTurnResult = {
    status: 'max-tokens',
    text: 'The refund is',
    messages: [],
    steps: 2,
    usage: { inputTokens: 30, outputTokens: 512 },
    toolCalls: [{ toolCallId: 'toolu_1', toolName: 'issue_refund', input: { orderId: '1001' }, outcome: 'cancelled', output: 'cut off', isError: true }],
    cutOff: { step: 2, finishReason: 'length', providerFinishReason: 'max_tokens' },
  };

  it('says which step was cut off, by what, and that its calls did not run', () => {
    expect(cutOffText(result)).toBe('step 2 was cut off by the output token limit or the context window (max_tokens): the text is partial; its tool calls did not run. Raise model.maxTokens or send a follow-up.');
    expect(cutOffText({ ...result, status: 'refused', toolCalls: [], cutOff: { step: 1, finishReason: 'content-filter', providerFinishReason: 'refusal' } })).toBe('step 1 was refused or stopped by a content filter (refusal).');
    expect(cutOffText({ ...result, status: 'completed', cutOff: undefined })).toBeUndefined();
  });

  it('shows the status and the reason in a turn\'s result', () => {
    const text = turnResultText('turn-1', result, plain);
    expect(text).toContain('turn-1  max-tokens  2 step(s)');
    expect(text).toContain('step 2 was cut off');
    expect(text).toContain('The refund is');
    expect(status('refused', plain)).toBe('refused');
  });
});
