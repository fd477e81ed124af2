/**
 * Small pure helpers that turn turnpike's data into text for a terminal: colours, tables,
 * durations, compact JSON. No I/O here; the commands decide where the text goes.
 */
import { progressSummary } from './approval-progress.js';
import Table from 'cli-table3';
import picocolors from 'picocolors';
import type { AgentTurnResult, ApprovalRecord, DecisionRecord, JsonSchema, Message, PendingToolCall, ReasoningPart, ToolCallOutcome, TurnStatus, Usage } from '../workflows/types/index.js';

/** picocolors' formatters, enabled or not. */
export type Colors = ReturnType<typeof picocolors.createColors>;

/**
 * Colours for a stream: only on a terminal, and never when `NO_COLOR` is set to anything but
 * the empty string (https://no-color.org), so piped output and logs stay plain text.
 */
export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): Colors {
  return picocolors.createColors(Boolean(stream.isTTY) && !env.NO_COLOR);
}

/** A table with a bold header and no colours of cli-table3's own (it would colour piped output). */
export function table(colors: Colors, head: string[], rows: string[][]): string {
  const rendered = new Table({ head: head.map((title) => colors.bold(title)), style: { head: [], border: [] } });
  rendered.push(...rows);
  return rendered.toString();
}

/**
 * `value` on one line, cut to `max` characters with an ellipsis (for table cells): JSON, except
 * that a string (an error result, a denial) shows as its text.
 */
export function compactJson(value: unknown, max = Infinity): string {
  const text = typeof value === 'string' ? value.replace(/\s*\n\s*/g, ' ') : (JSON.stringify(value) ?? String(value));
  return text.length > max ? `${text.slice(0, Math.max(0, max - 1))}…` : text;
}

const UNITS: Array<[suffix: string, ms: number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** A duration for people, in its largest unit and the next: `45s`, `3m 12s`, `23h 59m`, `2d 0h`. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.floor(ms / 1000) * 1000);
  const index = UNITS.findIndex(([, size]) => whole >= size);
  if (index === -1 || index === UNITS.length - 1) return `${whole / 1000}s`;
  const [[largeSuffix, large], [smallSuffix, small]] = [UNITS[index], UNITS[index + 1]];
  return `${Math.floor(whole / large)}${largeSuffix} ${Math.floor((whole % large) / small)}${smallSuffix}`;
}

/** How long ago an ISO 8601 instant was. */
export function age(iso: string, now: number): string {
  return formatDuration(now - Date.parse(iso));
}

/** How long until an ISO 8601 instant, or `expired` once it has passed. */
export function expiresIn(iso: string, now: number, colors: Colors): string {
  const left = Date.parse(iso) - now;
  return left > 0 ? formatDuration(left) : colors.red('expired');
}

/** Green for outcomes where the call did what was asked, red where it did not, yellow for cancelled. */
export function outcome(value: ToolCallOutcome, colors: Colors): string {
  switch (value) {
    case 'executed':
    case 'approved':
    case 'client':
      return colors.green(value);
    case 'denied':
    case 'expired':
    case 'error':
      return colors.red(value);
    case 'cancelled':
      return colors.yellow(value);
  }
}

/** A turn status, coloured by whether it waits for someone (yellow) or has ended (green / red). */
export function status(value: TurnStatus, colors: Colors): string {
  switch (value) {
    case 'running':
      return colors.cyan(value);
    case 'awaiting-input':
      return colors.yellow(value);
    case 'completed':
      return colors.green(value);
    case 'max-steps':
    case 'max-tokens':
    case 'refused':
    case 'invalid-output':
    case 'budget-exceeded':
    case 'cancelled':
      return colors.red(value);
  }
}

/**
 * Why a turn ended on a cut-off step, and what to do about it:
 * `step 2 was cut off by the output token limit (anthropic stop_reason max_tokens): ...`.
 */
export function cutOffText(result: AgentTurnResult): string | undefined {
  const { cutOff } = result;
  if (!cutOff) return undefined;
  const wire = cutOff.providerFinishReason ? ` (${cutOff.providerFinishReason})` : '';
  // A cut-off step's calls are the only cancelled ones of a turn that ended this way.
  const calls = result.toolCalls.some((call) => call.outcome === 'cancelled') ? '; its tool calls did not run' : '';
  return cutOff.finishReason === 'length'
    ? `step ${cutOff.step} was cut off by the output token limit or the context window${wire}: the text is partial${calls}. Raise model.maxTokens or send a follow-up.`
    : `step ${cutOff.step} was refused or stopped by a content filter${wire}${calls}.`;
}

/** Who decided a call, and why: `alice: "looks right"`, `automatic: within the limit`. */
export function approvalSummary(approval: ApprovalRecord | undefined): string {
  if (!approval) return '';
  const who = approval.automatic ? 'automatic' : (approval.approver ?? 'someone');
  return approval.reason ? `${who}: ${approval.reason}` : who;
}

/** The id to decide a parked call by: its approvalId for an approval, its toolCallId for a client tool. */
export function decisionId(call: PendingToolCall): string {
  return call.approvalId ?? call.toolCallId;
}

/** The command that resolves a parked call, so people can copy it from `watch` and `pending`. */
export function resolveHint(turnId: string, call: PendingToolCall): string {
  if (call.kind === 'budget') {
    return `turnpike approve ${turnId} ${call.approvalId} --as <you> [--input '{"extendBy":{…}}']   (extends the budget; deny … stops the turn)`;
  }
  if (call.kind === 'approval') return `turnpike approve ${turnId} ${call.approvalId} --as <you>   (or deny … --reason <why>)`;
  if (call.kind === 'elicitation') {
    return `turnpike submit ${turnId} ${call.toolCallId} '${answerTemplate(call.requestedSchema)}'   (or '{"action":"decline"}')`;
  }
  return `turnpike submit ${turnId} ${call.toolCallId} '<json>'`;
}

/**
 * An accepted answer to a server's question with a placeholder for each field the server asks
 * for, by type: `{"action":"accept","content":{"name":"<string>","age":<number>}}`.
 */
export function answerTemplate(schema: JsonSchema | undefined): string {
  const properties = Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>);
  const fields = properties.map(([name, property]) => {
    const type = typeof property.type === 'string' ? property.type : 'value';
    const hint = typeof property.format === 'string' ? `${type}: ${property.format}` : type;
    return `${JSON.stringify(name)}:${type === 'string' ? `"<${hint}>"` : `<${hint}>`}`;
  });
  return `{"action":"accept","content":{${fields.join(',')}}}`;
}

/**
 * Parked calls as a table, with a turn column when they carry their turn's id (`ParkedCall`), a
 * tenant column when a turn runs for one, and
 * a question column when an MCP server asks one: the question is what the person must answer.
 */
export function parkedCallsTable(calls: Array<PendingToolCall & { turnWorkflowId?: string; parentTurnId?: string; tenant?: string }>, colors: Colors, now: number): string {
  const withTurn = calls.some((call) => call.turnWorkflowId !== undefined);
  const withTenant = calls.some((call) => call.tenant !== undefined);
  // A sub-agent's calls name the turn whose agent tool call started theirs.
  const withParent = calls.some((call) => call.parentTurnId !== undefined);
  const withQuestion = calls.some((call) => call.kind === 'elicitation');
  const withProgress = calls.some((call) => call.progress !== undefined);
  return table(
    colors,
    [...(withTurn ? ['turn'] : []), ...(withTenant ? ['tenant'] : []), ...(withParent ? ['parent turn'] : []), 'approvalId / toolCallId', 'kind', 'tool', 'input', ...(withQuestion ? ['question'] : []), ...(withProgress ? ['votes'] : []), 'age', 'expires in'],
    calls.map((call) => [
      ...(withTurn ? [call.turnWorkflowId ?? ''] : []),
      ...(withTenant ? [call.tenant ?? ''] : []),
      ...(withParent ? [call.parentTurnId ?? ''] : []),
      decisionId(call),
      call.kind,
      call.toolName,
      compactJson(call.input, 40),
      ...(withQuestion ? [call.message !== undefined ? compactJson(call.message, 60) : ''] : []),
      ...(withProgress ? [progressSummary(call.progress)] : []),
      age(call.requestedAt, now),
      expiresIn(call.expiresAt, now, colors),
    ]),
  );
}

/** The audit trail: one row per decision. */
export function decisionsTable(decisions: Array<DecisionRecord & { turnWorkflowId: string }>, colors: Colors): string {
  return table(
    colors,
    ['decided at', 'turn', 'tool', 'outcome', 'by', 'reason'],
    decisions.map((decision) => [
      decision.decidedAt,
      decision.turnWorkflowId,
      decision.toolName,
      decision.approved ? colors.green(decision.outcome) : colors.red(decision.outcome),
      decision.automatic ? colors.dim('policy') : (decision.approver ?? ''),
      `${decision.reason ?? ''}${decision.editedInput !== undefined ? ` (input edited: ${compactJson(decision.editedInput, 30)})` : ''}${decision.progress ? ` [${progressSummary(decision.progress)}]` : ''}`,
    ]),
  );
}

/** A finished turn: status line, final text, and every tool call with its outcome and decision. */
export function turnResultText(turnId: string, result: AgentTurnResult, colors: Colors): string {
  const lines = [
    `${colors.bold(turnId)}  ${status(result.status, colors)}  ${result.steps} step(s), ${usageText(result.usage)}`,
  ];
  if (result.supersededBy) lines.push(colors.dim(`superseded by message ${result.supersededBy}`));
  const cutOff = cutOffText(result);
  if (cutOff) lines.push(colors.yellow(cutOff));
  if (result.text) lines.push('', result.text);
  if (result.output !== undefined) lines.push('', colors.green('typed output:'), JSON.stringify(result.output, null, 2));
  if (result.outputErrors) lines.push('', colors.red('not valid typed output:'), ...result.outputErrors.map((error) => `  ${error}`));
  if (result.toolCalls.length > 0) {
    lines.push(
      '',
      table(
        colors,
        ['toolCallId', 'tool', 'input', 'outcome', 'output', 'decided by'],
        result.toolCalls.map((call) => [
          call.toolCallId,
          call.toolName,
          compactJson(call.input, 40),
          outcome(call.outcome, colors),
          compactJson(call.output, 40),
          approvalSummary(call.approval),
        ]),
      ),
    );
  }
  return lines.join('\n');
}

/** `120 in (80 cached, 20 written to cache) / 40 out (30 reasoning) tokens`: the optional counts only when reported. */
export function usageText(usage: Usage): string {
  const cacheCounts = [
    ...(usage.cachedInputTokens ? [`${usage.cachedInputTokens} cached`] : []),
    ...(usage.cacheWriteInputTokens ? [`${usage.cacheWriteInputTokens} written to cache`] : []),
  ];
  const cached = cacheCounts.length > 0 ? ` (${cacheCounts.join(', ')})` : '';
  const reasoning = usage.reasoningTokens ? ` (${usage.reasoningTokens} reasoning)` : '';
  return `${usage.inputTokens} in${cached} / ${usage.outputTokens} out${reasoning} tokens`;
}

/** Reasoning is shown apart from the reply, shortened: it can run to thousands of words. */
function reasoningLine(part: ReasoningPart): string {
  if (part.redactedData !== undefined) return `(${part.provider} reasoning, redacted)`;
  // An OpenAI reasoning item without a summary is only its encrypted content.
  if (part.text === '' && part.encryptedContent !== undefined) return `(${part.provider} reasoning, encrypted)`;
  const text = part.text.replace(/\s+/g, ' ').trim();
  return `(${part.provider} reasoning) ${text.length > 160 ? `${text.slice(0, 159)}…` : text}`;
}

/** One history message as lines: user text, assistant text and tool calls (→), tool results (←). */
export function messageLines(message: Message, colors: Colors): string[] {
  switch (message.role) {
    case 'user':
      return [typeof message.content === 'string' ? message.content : message.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('')];
    case 'assistant':
      return message.content.map((part) =>
        part.type === 'text' ? part.text
        : part.type === 'reasoning' ? colors.dim(reasoningLine(part))
        : colors.cyan(`→ ${part.toolName} ${compactJson(part.input)}  (${part.toolCallId})`),
      );
    case 'tool':
      return message.content.map((part) => {
        const line = `← ${part.toolName} (${part.toolCallId}): ${compactJson(part.output, 200)}`;
        return part.isError ? colors.red(line) : colors.green(line);
      });
  }
}

/** A page of a conversation's history, numbered by position in the whole history. */
export function historyText(page: { messages: Message[]; offset: number; total: number }, colors: Colors): string {
  const lines = page.messages.flatMap((message, index) => {
    const [first = '', ...rest] = messageLines(message, colors);
    const label = `${colors.dim(`#${page.offset + index}`)} ${colors.bold(message.role.padEnd(9))}`;
    const indent = ' '.repeat(`#${page.offset + index} `.length + 9);
    return [`${label} ${first}`, ...rest.map((line) => `${indent} ${line}`)];
  });
  const last = page.offset + page.messages.length;
  lines.push(colors.dim(page.messages.length > 0 ? `messages ${page.offset}–${last - 1} of ${page.total}` : `no messages at offset ${page.offset} (of ${page.total})`));
  return lines.join('\n');
}
