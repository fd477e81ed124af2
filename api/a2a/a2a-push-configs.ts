/**
 * A2A push notification configs, each a durable `a2aPushNotifier` workflow (workflows/a2a/) on the
 * turns' task queue, with the config in its input and memo: nothing is kept in the API process.
 * Create starts it (workflow id `<task id>/push/<config id>`, so a retried create finds the one it
 * started), Get reads its memo, List lists the task's notifiers from visibility, Delete cancels it.
 * The rights are checked by the handler before any of these runs, as for the other methods.
 * A receiver on a private network is refused unless `A2aOptions.pushAllow` allows it
 * (activities/a2a-push/receiver-addresses.ts): `checked`, and again by `create` before anything starts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TurnpikeClient } from '../../client/turnpike-client.js';
import { startA2aPushNotifier } from '../../client/a2a-push-notifiers.js';
import { refusedReceiverUrl, type PushAllowList } from '../../activities/a2a-push/receiver-addresses.js';
import { A2A_PUSH_CONFIG_MEMO_KEY, A2A_PUSH_NOTIFIER_WORKFLOW, a2aPushNotifierId, type A2aPushConfig } from '../../workflows/a2a/a2a-push-notifier.js';

const CONFIG_ID = /^[A-Za-z0-9._-]{1,64}$/;
/** An HTTP auth scheme is a token (RFC 9110 §5.6.2). */
const SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Printable ASCII, no line breaks: what a header value may carry. */
const HEADER_VALUE = /^[\x20-\x7e]{1,4096}$/;
/** At most this many configs are listed for a task. */
const MAX_LISTED = 100;

/** The config as turnpike keeps it, checked; a bad one is refused with the reason before anything starts. */
export function checkedPushConfig(taskId: string, given: TaskPushNotificationConfig): A2aPushConfig {
  let url: URL;
  try {
    url = new URL(given.url);
  } catch {
    throw new RequestMalformedError({ message: `The push notification url ${JSON.stringify(given.url)} is not a URL` });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RequestMalformedError({ message: `The push notification url must be http or https, not ${url.protocol}` });
  if (url.username || url.password) throw new RequestMalformedError({ message: 'The push notification url must not carry credentials: give them as authentication' });
  const id = given.id || randomUUID();
  if (!CONFIG_ID.test(id)) throw new RequestMalformedError({ message: 'A push notification config id is 1 to 64 letters, digits, ".", "_" or "-"' });
  const token = given.token || randomBytes(32).toString('base64url');
  if (!HEADER_VALUE.test(token) || token.length > 512) throw new RequestMalformedError({ message: 'The push notification token must be 1 to 512 printable ASCII characters' });
  const authentication = given.authentication;
  if (authentication && (authentication.scheme || authentication.credentials)) {
    if (!SCHEME.test(authentication.scheme) || !HEADER_VALUE.test(authentication.credentials)) {
      throw new RequestMalformedError({ message: 'authentication needs an HTTP scheme (e.g. "Bearer") and credentials of printable ASCII' });
    }
  }
  return {
    id,
    taskId,
    url: url.href,
    token,
    ...(authentication?.scheme ? { authentication: { scheme: authentication.scheme, credentials: authentication.credentials } } : {}),
  };
}

/** The config as A2A shows it. */
export function wireConfig(config: A2aPushConfig): TaskPushNotificationConfig {
  return { tenant: '', id: config.id, taskId: config.taskId, url: config.url, token: config.token, authentication: config.authentication ? { ...config.authentication } : undefined };
}

export class A2aPushConfigs {
  constructor(
    private readonly client: TurnpikeClient,
    private readonly allow: PushAllowList,
  ) {}

  /** `checkedPushConfig`, and its receiver is one callers may register (not private, unless allowed). */
  checked(taskId: string, given: TaskPushNotificationConfig): A2aPushConfig {
    const config = checkedPushConfig(taskId, given);
    this.checkReceiver(config.url);
    return config;
  }

  private checkReceiver(url: string): void {
    const refused = refusedReceiverUrl(new URL(url), this.allow);
    if (refused) throw new RequestMalformedError({ message: `The push notification url ${JSON.stringify(url)} is refused: ${refused}. turnpike sends notifications to receivers on private networks only when its operator allows them` });
  }

  /** Starts the config's notifier, or finds the one a retried create started; a different config under the same id is refused. */
  async create(config: A2aPushConfig): Promise<A2aPushConfig> {
    this.checkReceiver(config.url);
    const existing = await this.read(config.taskId, config.id);
    if (existing) {
      if (JSON.stringify(existing) === JSON.stringify(config)) return existing;
      throw new RequestMalformedError({ message: `Task ${config.taskId} already has a push notification config ${JSON.stringify(config.id)}: delete it first, or use another id` });
    }
    // Two creates at once: the second finds the first's run, and is compared below.
    await startA2aPushNotifier(this.client.client, this.client.taskQueue, config);
    const started = await this.read(config.taskId, config.id);
    if (started && JSON.stringify(started) !== JSON.stringify(config)) throw new RequestMalformedError({ message: `Task ${config.taskId} already has a push notification config ${JSON.stringify(config.id)}` });
    return config;
  }

  /** A config that is set: its notifier runs, or ended after the task did. A deleted one is gone. */
  async read(taskId: string, configId: string): Promise<A2aPushConfig | undefined> {
    try {
      const described = await this.client.client.workflow.getHandle(a2aPushNotifierId(taskId, configId)).describe();
      if (described.status.name !== 'RUNNING' && described.status.name !== 'COMPLETED') return undefined;
      return (await described.memo?.[A2A_PUSH_CONFIG_MEMO_KEY]) as A2aPushConfig | undefined;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return undefined;
      throw error;
    }
  }

  async get(taskId: string, configId: string): Promise<A2aPushConfig> {
    const config = await this.read(taskId, configId);
    if (!config) throw new TaskNotFoundError({ message: `Task ${taskId} has no push notification config ${JSON.stringify(configId)}` });
    return config;
  }

  /** The task's configs, from visibility (which follows a create by a moment). */
  async list(taskId: string): Promise<A2aPushConfig[]> {
    const query = `WorkflowType = '${A2A_PUSH_NOTIFIER_WORKFLOW}' AND WorkflowId STARTS_WITH '${taskId}/push/' AND ExecutionStatus IN ('Running', 'Completed')`;
    const configs: A2aPushConfig[] = [];
    for await (const execution of this.client.client.workflow.list({ query, pageSize: MAX_LISTED })) {
      const config = execution.memo?.[A2A_PUSH_CONFIG_MEMO_KEY] as A2aPushConfig | undefined;
      if (config?.taskId === taskId) configs.push(config);
      if (configs.length >= MAX_LISTED) break;
    }
    return configs.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Cancels the config's notifier: nothing more is sent to it. Deleting a deleted config is no error. */
  async delete(taskId: string, configId: string): Promise<void> {
    try {
      const handle = this.client.client.workflow.getHandle(a2aPushNotifierId(taskId, configId));
      if ((await handle.describe()).status.name !== 'RUNNING') return;
      await handle.cancel();
      // Gone once this answers: a Get after it finds nothing (the run closes within a workflow task).
      await Promise.race([handle.result().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new TaskNotFoundError({ message: `Task ${taskId} has no push notification config ${JSON.stringify(configId)}` });
      throw error;
    }
  }
}
