/**
 * A remote A2A agent for tests, served the way `@a2a-js/sdk`'s own sample agent is: the SDK's
 * `DefaultRequestHandler` over an `InMemoryTaskStore`, its `JsonRpcTransportHandler` reading the
 * JSON-RPC requests (on node:http, where the sample mounts the same handler on express), and an
 * `AgentExecutor` that publishes task, status and artifact events as the sample's does.
 *
 * What it does is chosen by the first message's text:
 * - `answer …`: completes with an artifact (a text part and a data part);
 * - `ask …`: asks "Which colour do you want?" (`input-required`), then completes with the answer;
 * - `hold …`: asks as `ask` does, then works on the answer until the test opens `latch`;
 * - `again …`: asks the same question twice, then completes with the second answer;
 * - `fail …`: fails, saying why;
 * - `wait …`: works until the test opens `latch`, then completes; `CancelTask` cancels it
 *   (the executor publishes `canceled` and ends the task, as the SDK's sample agent does);
 * - `big …`: completes with a 300 KiB artifact.
 *
 * It records every task it creates, every message it receives and every JSON-RPC method called,
 * and `forge` lets a test rewrite an answer before it is sent (a forged or broken remote).
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { A2A_PROTOCOL_VERSION, Role, TaskState, type AgentCard, type Message, type Part, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';

/** The answer of a `big …` task: 300 KiB of text, over the 128 KiB past which a tool output is stored by reference. */
export const BIG_ANSWER = 'crate 1001 on shelf B; '.repeat(Math.ceil((300 * 1024) / 23));

export interface RemoteAgent {
  url: string;
  card: AgentCard;
  /** Ids of the tasks the executor created, in order. */
  created: string[];
  /** Every message the executor received. */
  received: Array<{ messageId: string; taskId: string; text: string }>;
  /** Every JSON-RPC method called, in order, and `GET agent-card` for each read of the card. */
  methods: string[];
  /** Rewrites the JSON-RPC answer to `method` (return it unchanged to pass it). */
  forge: ((method: string, answer: Record<string, unknown>) => unknown) | undefined;
  /** A task as the remote's store holds it now (its state after a cancel, say). */
  task(id: string): Promise<Task | undefined>;
  /** Lets every `wait` task complete. */
  openLatch(): void;
  /** The task as the agent's task store holds it. */
  stored(taskId: string): Promise<Task | undefined>;
  close(): Promise<void>;
}

function text(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function agentMessage(taskId: string, contextId: string, parts: Part[]): Message {
  return { role: Role.ROLE_AGENT, messageId: randomUUID(), taskId, contextId, parts, metadata: {}, extensions: [], referenceTaskIds: [] };
}

class TestExecutor implements AgentExecutor {
  constructor(private readonly agent: Pick<RemoteAgent, 'created' | 'received'>, private readonly latch: Promise<void>) {}

  /** Each task's context, for its cancellation's status. */
  private readonly contexts = new Map<string, string>();
  private readonly cancelled = new Set<string>();

  /** As the SDK's cancellable sample agent does: a final `canceled` status, and the bus finished. */
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    this.cancelled.add(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: this.contexts.get(taskId) ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: agentMessage(taskId, this.contexts.get(taskId) ?? '', [text('Cancelled as asked.')]) },
        metadata: {},
      }),
    );
    bus.finished();
  };

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = request;
    const said = userMessage.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
    this.agent.received.push({ messageId: userMessage.messageId, taskId, text: said });
    const existing = request.task;
    this.contexts.set(taskId, contextId);
    if (!existing) this.agent.created.push(taskId);
    const task: Task = existing ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [userMessage],
      metadata: {},
    };
    bus.publish(AgentEvent.task(task));
    const status = (state: TaskState, message?: string) =>
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, timestamp: new Date().toISOString(), message: message ? agentMessage(taskId, contextId, [text(message)]) : undefined },
          metadata: {},
        }),
      );
    const complete = (parts: Part[]) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts, metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      status(TaskState.TASK_STATE_COMPLETED);
    };
    status(TaskState.TASK_STATE_WORKING);
    const first = existing ? existing.history.find((message) => message.role === Role.ROLE_USER) : userMessage;
    const asked = first?.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('') ?? '';
    if (asked.startsWith('answer')) {
      complete([text('Order 1001 ships on Tuesday.'), { content: { $case: 'data', value: { orderId: '1001', eta: 'Tuesday' } }, metadata: undefined, filename: '', mediaType: 'application/json' }]);
    } else if (asked.startsWith('ask')) {
      if (existing) complete([text(`Painted it ${said}.`)]);
      else status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour do you want?');
    } else if (asked.startsWith('hold')) {
      if (!existing) status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour do you want?');
      else {
        await this.latch;
        if (!this.cancelled.has(taskId)) complete([text(`Held, then painted it ${said}.`)]);
      }
    } else if (asked.startsWith('again')) {
      // Asks the same question twice; the second answer completes it.
      if (this.agent.received.filter((message) => message.taskId === taskId).length < 3) status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour do you want?');
      else complete([text(`Painted it ${said}.`)]);
    } else if (asked.startsWith('big')) {
      complete([text(BIG_ANSWER)]);
    } else if (asked.startsWith('fail')) {
      status(TaskState.TASK_STATE_FAILED, 'The warehouse is closed.');
    } else if (asked.startsWith('wait')) {
      await this.latch;
      if (this.cancelled.has(taskId)) return;
      complete([text('Waited, and done.')]);
    } else {
      status(TaskState.TASK_STATE_REJECTED, `I do not know how to "${asked}".`);
    }
  }
}

export async function startRemoteAgent(name = 'warehouse'): Promise<RemoteAgent> {
  let openLatch!: () => void;
  const latch = new Promise<void>((resolve) => (openLatch = resolve));
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const card: AgentCard = {
    name,
    description: 'Answers questions about orders in the warehouse.',
    supportedInterfaces: [{ url: `${url}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: '1.0.0',
    documentationUrl: '',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [],
    signatures: [],
  } as unknown as AgentCard;
  const store = new InMemoryTaskStore();
  const agent: RemoteAgent = {
    url,
    card,
    created: [],
    received: [],
    methods: [],
    forge: undefined,
    task: (id) => store.load(id, new ServerCallContext({ requestedVersion: A2A_PROTOCOL_VERSION })),
    openLatch,
    stored: (id) => store.load(id, new ServerCallContext({ requestedVersion: A2A_PROTOCOL_VERSION })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const handler = new JsonRpcTransportHandler(new DefaultRequestHandler(card, store, new TestExecutor(agent, latch)));
  server.on('request', (request, response) => {
    void (async () => {
      if (request.method === 'GET' && request.url === '/.well-known/agent-card.json') {
        agent.methods.push('GET agent-card');
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(card));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method?: string };
      agent.methods.push(String(body.method));
      const context = new ServerCallContext({ requestedVersion: String(request.headers['a2a-version'] ?? '0.3') });
      let answer = (await handler.handle(body as Record<string, unknown>, context)) as Record<string, unknown>;
      if (agent.forge) answer = agent.forge(String(body.method), answer) as Record<string, unknown>;
      response.setHeader('content-type', 'application/json');
      response.end(typeof answer === 'string' ? answer : JSON.stringify(answer));
    })().catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  return agent;
}
