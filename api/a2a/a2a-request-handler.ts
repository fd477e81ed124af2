/**
 * turnpike's own A2A request handler (the SDK's `A2ARequestHandler`), behind the SDK's JSON-RPC
 * wire handling: an A2A task is a turn. Nothing is kept in this process: the task id is the
 * turn's id, derived from the caller and the message id (a retried `SendMessage` finds the turn
 * it started), every read goes to the turn through the TurnpikeClient, a cancel cancels the
 * workflow, and a follow-up's data parts decide approvals and answer client tools and questions
 * the way the HTTP API's routes do (a2a-answers.ts). So any API process answers for any task.
 */
import { createHash } from 'node:crypto';
import type { AgentCard, CancelTaskRequest, DeleteTaskPushNotificationConfigRequest, GetTaskPushNotificationConfigRequest, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, Message, SendMessageRequest, StreamResponse, SubscribeToTaskRequest, Task, GetTaskRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ExtendedAgentCardNotConfiguredError, PushNotificationNotSupportedError, RequestMalformedError, TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { Caller } from '../auth.js';
import type { RouteContext } from '../route-context.js';
import { requestPlacement } from '../tenant-binding.js';
import type { A2aAgent } from './a2a-agents.js';
import { followTask, settledTask } from './a2a-follow.js';
import { A2aPushConfigs, checkedPushConfig, wireConfig } from './a2a-push-configs.js';
import { isTerminal, readTask } from './a2a-task-view.js';
import { answersOf, checkResults, sendAnswers } from './a2a-answers.js';
import { messageContent } from './a2a-parts.js';
import { taskInContext } from './a2a-contexts.js';
import type { Message as ModelMessage } from '../../workflows/types/index.js';

/** Where the route puts the caller and the stream's abort signal in the SDK's call context. */
export const CALLER_KEY = 'turnpike.caller';
export const SIGNAL_KEY = 'turnpike.signal';

/** The task id (and turn id) of a caller's message to an agent: the same message, the same turn. */
export function taskIdFor(agent: string, identity: string, messageId: string): string {
  return `a2a-${agent}-${createHash('sha256').update(`${identity}\n${messageId}`).digest('hex').slice(0, 40)}`;
}

export class TurnpikeA2aHandler implements A2ARequestHandler {
  constructor(
    private readonly routes: RouteContext,
    private readonly name: string,
    private readonly agent: A2aAgent,
    private readonly card: AgentCard,
    private readonly pushConfigs: A2aPushConfigs | undefined,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return this.card;
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError();
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Task> {
    const taskId = await this.accept(params, context);
    return params.configuration?.returnImmediately ? this.read(taskId) : settledTask(this.routes.client, taskId, signalOf(context));
  }

  async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const taskId = await this.accept(params, context);
    yield* followTask(this.routes.client, taskId, signalOf(context));
  }

  async getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    await this.readable(params.id, callerOf(context));
    return this.read(params.id);
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    await this.readable(params.id, callerOf(context));
    const task = await this.read(params.id);
    if (task.status?.state === 5 /* TASK_STATE_CANCELED */) return task;
    if (isTerminal(task)) throw new TaskNotCancelableError({ message: `Task ${params.id} has ended (${task.metadata?.turnStatus}) and cannot be canceled` });
    // Cancelling the workflow settles every open call with a cancelled result: the history stays valid.
    await this.routes.client.turn(params.id).cancel();
    await this.routes.client.turnResult(params.id);
    return this.read(params.id);
  }

  async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.readable(params.id, callerOf(context));
    if (isTerminal(await this.read(params.id))) throw new UnsupportedOperationError({ message: `Task ${params.id} has ended and cannot be subscribed to` });
    yield* followTask(this.routes.client, params.id, signalOf(context));
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError({ message: 'ListTasks is not served by turnpike yet' });
  }

  /** Push notifications to a task: a durable notifier per config (a2a-push-configs.ts), for whoever may read the task. */
  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const pushConfigs = this.pushing();
    await this.readable(params.taskId, callerOf(context));
    const config = checkedPushConfig(params.taskId, params);
    const task = await this.read(params.taskId);
    if (isTerminal(task)) throw new UnsupportedOperationError({ message: `Task ${params.taskId} has ended (${task.metadata?.turnStatus}): it sends no more notifications` });
    return wireConfig(await pushConfigs.create(config));
  }

  async getTaskPushNotificationConfig(params: GetTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const pushConfigs = this.pushing();
    await this.readable(params.taskId, callerOf(context));
    return wireConfig(await pushConfigs.get(params.taskId, params.id));
  }

  async listTaskPushNotificationConfigs(params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext): Promise<ListTaskPushNotificationConfigsResponse> {
    const pushConfigs = this.pushing();
    await this.readable(params.taskId, callerOf(context));
    return { configs: (await pushConfigs.list(params.taskId)).map(wireConfig), nextPageToken: '' };
  }

  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext): Promise<void> {
    const pushConfigs = this.pushing();
    await this.readable(params.taskId, callerOf(context));
    await pushConfigs.delete(params.taskId, params.id);
  }

  private pushing(): A2aPushConfigs {
    if (!this.pushConfigs) throw new PushNotificationNotSupportedError();
    return this.pushConfigs;
  }

  /** Starts the message's turn, or passes a follow-up's decisions to its task's turn; returns the task id. */
  private async accept(params: SendMessageRequest, context: ServerCallContext): Promise<string> {
    const message = params.message;
    if (!message || !message.messageId) throw new RequestMalformedError({ message: 'SendMessage needs a message with a messageId' });
    const caller = callerOf(context);
    // A config sent with the message is checked before anything starts, and set once the task exists.
    const push = params.configuration?.taskPushNotificationConfig;
    const pushConfigs = push ? this.pushing() : undefined;
    if (push) pushConfigs?.checked(message.taskId || 'a2a-', push);
    const withPush = async (taskId: string) => {
      if (push && pushConfigs) await pushConfigs.create(checkedPushConfig(taskId, { ...push, id: push.id || `message-${createHash('sha256').update(message.messageId).digest('hex').slice(0, 16)}` }));
      return taskId;
    };
    if (message.taskId) {
      await this.decide(message, caller);
      return withPush(message.taskId);
    }
    // Its files are checked here too (a2a-parts.ts); startTurn keeps the large ones in the content store.
    const content = messageContent(message);
    const start = (taskId: string, history: ModelMessage[], memo?: Record<string, string>) => this.start(taskId, [...history, { role: 'user', content }], caller, memo);
    // A context's next task, with the history its last task ended with (a2a-contexts.ts).
    if (message.contextId) return withPush(await taskInContext(this.routes, this.name, caller, message.contextId, message.messageId, start));
    const taskId = taskIdFor(this.name, caller.identity, message.messageId);
    // A retried message finds its turn, running or ended, and starts nothing.
    if (await this.routes.client.describeStart(taskId)) return withPush(taskId);
    await start(taskId, []);
    return withPush(taskId);
  }

  /** Starts a task's turn with the agent's settings, for the caller's tenant. */
  private async start(taskId: string, messages: ModelMessage[], caller: Caller, memo?: Record<string, string>): Promise<void> {
    const placement = requestPlacement(caller, this.routes.access.isAdmin(caller), {});
    if (typeof placement === 'string') throw new RequestMalformedError({ message: placement });
    const { model, system, tools, maxSteps, approvalTimeout } = this.agent;
    const input = {
      model,
      messages,
      ...(system !== undefined ? { system } : {}),
      ...(tools !== undefined ? { tools } : {}),
      ...(maxSteps !== undefined ? { maxSteps } : {}),
      ...(approvalTimeout !== undefined ? { approvalTimeout } : {}),
    };
    await this.routes.client.startTurn(input, { turnId: taskId, startedBy: caller.identity, ...placement, ...(memo ? { memo } : {}) });
  }

  /** A follow-up on a task: its data parts decide approvals and answer client tools and questions (a2a-answers.ts). */
  private async decide(message: Message, caller: Caller): Promise<void> {
    const taskId = message.taskId;
    await this.readable(taskId, caller);
    const state = await this.routes.client.turnState(taskId);
    const task = await readTask(this.routes.client, taskId, state);
    if (message.contextId && message.contextId !== task.contextId) throw new RequestMalformedError({ message: `contextId ${JSON.stringify(message.contextId)} is not the context of task ${taskId}` });
    if (isTerminal(task)) throw new UnsupportedOperationError({ message: `Task ${taskId} has ended (${task.metadata?.turnStatus}) and takes no more messages` });
    const answers = answersOf(message, taskId);
    checkResults(answers, state.pending, taskId);
    await sendAnswers(this.routes, caller, taskId, answers);
  }

  /** Unknown ids, another agent's tasks and turns the caller may not read are all "not found". */
  private async readable(taskId: string, caller: Caller): Promise<void> {
    if (!taskId.startsWith(`a2a-${this.name}-`) || !(await this.routes.access.mayReadTurn(caller, taskId))) throw new TaskNotFoundError({ message: `Task not found: ${taskId}` });
  }

  private async read(taskId: string): Promise<Task> {
    return readTask(this.routes.client, taskId);
  }
}

function callerOf(context: ServerCallContext): Caller {
  const caller = context.state.get(CALLER_KEY) as Caller | undefined;
  if (!caller) throw new Error('The A2A route calls the handler with an authenticated caller');
  return caller;
}

function signalOf(context: ServerCallContext): AbortSignal | undefined {
  return context.state.get(SIGNAL_KEY) as AbortSignal | undefined;
}
