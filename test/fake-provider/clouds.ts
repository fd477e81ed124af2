/**
 * Fake Amazon Bedrock, Google Vertex AI (with its STS token endpoint) and Azure OpenAI, in front of
 * the strict OpenAI + Anthropic fake (server.ts).
 *
 * Each checks what its cloud checks, with the cloud's real status and error text: Bedrock the SigV4
 * signature (aws-sigv4.ts), its `/model/{id}/invoke` and `/invoke-with-response-stream` URLs, a
 * known model id and the `anthropic_version: 'bedrock-2023-05-31'` body without `model` or
 * `stream`; Vertex the bearer token its STS issued, the project, region and
 * `publishers/anthropic/models/{m}:rawPredict` / `:streamRawPredict` URL and
 * `anthropic_version: 'vertex-2023-10-16'` without `model`; Azure the `api-key` or Entra bearer
 * token, the deployment and the `api-version`. What is left is the first-party request, which the
 * fake forwards to server.ts with the model put back: the body is held to the Messages API's or
 * Chat Completions' rules there, answered from the test's script there, and the answer comes back
 * in the cloud's framing (Bedrock's event stream, its error shapes).
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyReply } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { sigV4Refusal } from './aws-sigv4.js';
import { sseToBedrockChunks } from './bedrock-event-stream.js';
import type { FakeProviderServer, Json } from './server.js';

export const BEDROCK_VERSION = 'bedrock-2023-05-31';
export const VERTEX_VERSION = 'vertex-2023-10-16';

export interface CloudFakeOptions {
  bedrock: { region: string; keys: Record<string, string> };
  vertex: { project: string; region: string; audience: string; subjectToken: string };
  /** `deploymentModels`: the model each deployment runs, which the Responses route forwards as `model`. */
  azure: { apiKey: string; bearerToken: string; apiVersions: string[]; deployments: string[]; deploymentModels?: Record<string, string> };
}

export interface CloudRequest {
  cloud: 'bedrock' | 'vertex' | 'vertex-sts' | 'azure' | 'unknown';
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as it arrived (JSON parsed when it is JSON). */
  body: Json;
  /** Why the cloud refused it; empty when it went on to the model. */
  errors: string[];
  status: number;
}

export interface CloudFake {
  /** `http://127.0.0.1:PORT`: Bedrock's and Azure's base URL; Vertex's is `${url}/v1`. */
  url: string;
  /** The STS endpoint for a workload identity federation credentials file. */
  tokenUrl: string;
  requests: CloudRequest[];
  close(): Promise<void>;
}

const BEDROCK_MODEL_ID = /^(?:(?:us|eu|apac|jp|au|global)\.)?anthropic\.claude-[a-z0-9.-]+-v\d+:\d+$/;
const VERTEX_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/]+):(rawPredict|streamRawPredict)$/;
const GOOGLE_UNAUTHENTICATED =
  'Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';

/** Starts the cloud fakes on 127.0.0.1 in front of `base`. */
export async function startCloudFake(base: FakeProviderServer, options: CloudFakeOptions): Promise<CloudFake> {
  const app = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024, forceCloseConnections: true });
  // The raw bytes: Bedrock's signature covers them exactly.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const requests: CloudRequest[] = [];
  const issuedTokens = new Set<string>();

  app.all('/*', async (request, reply) => {
    const path = new URL(request.raw.url ?? '/', 'http://placeholder').pathname;
    const raw = typeof request.body === 'string' ? request.body : '';
    const recorded: CloudRequest = { cloud: 'unknown', method: request.method, url: request.raw.url ?? '', headers: request.headers, body: parseJson(raw) ?? raw, errors: [], status: 200 };
    requests.push(recorded);
    const refuse = (status: number, error: string, body: Json, headers: Record<string, string> = {}) => {
      recorded.errors.push(error);
      recorded.status = status;
      return reply.code(status).headers(headers).send(body);
    };

    const bedrock = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/.exec(path);
    if (bedrock && request.method === 'POST') {
      recorded.cloud = 'bedrock';
      const bedrockError = (status: number, errorType: string, message: string) =>
        refuse(status, message, { message }, { 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
      const refusal = await sigV4Refusal({ method: request.method, rawUrl: request.raw.url ?? '', headers: request.headers, body: raw }, options.bedrock.keys, options.bedrock.region, 'bedrock');
      if (refusal) return bedrockError(refusal.status, refusal.errorType, refusal.message);
      const modelId = decodeURIComponent(bedrock[1]);
      const body = parseJson(raw);
      if (!isObject(body)) return bedrockError(400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
      const malformed = (problem: string) => bedrockError(400, 'ValidationException', `Malformed input request: #: ${problem}, please reformat your input and try again.`);
      if (body.anthropic_version === undefined) return malformed('required key [anthropic_version] not found');
      if (body.anthropic_version !== BEDROCK_VERSION) return malformed(`anthropic_version: ${JSON.stringify(body.anthropic_version)} is not a valid enum value`);
      for (const key of ['model', 'stream']) if (key in body) return malformed(`extraneous key [${key}] is not permitted`);
      if (!BEDROCK_MODEL_ID.test(modelId)) return bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.');
      const { anthropic_version: _version, ...rest } = body;
      const streamed = bedrock[2] === 'invoke-with-response-stream';
      const upstream = await forward(`${base.anthropicBaseURL}/v1/messages`, { 'x-api-key': 'cloud-fake', 'anthropic-version': '2023-06-01' }, { ...rest, model: modelId, ...(streamed ? { stream: true } : {}) });
      recorded.status = upstream.status;
      if (upstream.ok && streamed) return relayBedrockStream(reply, upstream);
      if (upstream.ok) return relay(reply, upstream);
      // The model's refusal, in Bedrock's shape.
      const error = (await upstream.json()) as Json;
      const message = error?.error?.message ?? 'error';
      const [status, errorType] =
        upstream.status === 429 ? [429, 'ThrottlingException']
        : upstream.status === 529 || upstream.status === 503 ? [503, 'ServiceUnavailableException']
        : upstream.status >= 500 ? [500, 'InternalServerException']
        : [upstream.status, 'ValidationException'];
      recorded.status = status;
      return reply.code(status).headers({ ...retryHeaders(upstream), 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/` }).send({ message });
    }

    if (path === '/v1/token' && request.method === 'POST') {
      recorded.cloud = 'vertex-sts';
      const form = new URLSearchParams(raw);
      recorded.body = Object.fromEntries(form);
      const invalid = (description: string) => refuse(400, description, { error: 'invalid_grant', error_description: description });
      if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') return refuse(400, 'grant_type', { error: 'unsupported_grant_type', error_description: 'Invalid value for "grant_type".' });
      if (form.get('audience') !== options.vertex.audience) return invalid('The audience in the request does not match the expected audience.');
      if (!(form.get('scope') ?? '').split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return refuse(400, 'scope', { error: 'invalid_scope', error_description: 'Invalid scope.' });
      if (form.get('subject_token') !== options.vertex.subjectToken) return invalid('The subject token could not be verified.');
      const token = `ya29.fake-${randomBytes(24).toString('hex')}`;
      issuedTokens.add(token);
      return reply.send({ access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 3600 });
    }

    const vertex = VERTEX_PATH.exec(path);
    if (vertex && request.method === 'POST') {
      recorded.cloud = 'vertex';
      const googleError = (status: number, code: string, message: string) => refuse(status, message, { error: { code: status, message, status: code } });
      const authorization = request.headers.authorization;
      if (!authorization) return googleError(401, 'UNAUTHENTICATED', `Request is missing required authentication credential. ${GOOGLE_UNAUTHENTICATED}`);
      if (!authorization.startsWith('Bearer ') || !issuedTokens.has(authorization.slice(7))) {
        return googleError(401, 'UNAUTHENTICATED', `Request had invalid authentication credentials. ${GOOGLE_UNAUTHENTICATED}`);
      }
      const [, project, region, encodedModel, method] = vertex;
      const model = decodeURIComponent(encodedModel);
      if (project !== options.vertex.project || region !== options.vertex.region) {
        return googleError(403, 'PERMISSION_DENIED', `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/${project}/locations/${region}/publishers/anthropic/models/${model}' (or it may not exist).`);
      }
      const body = parseJson(raw);
      const invalid = (message: string) => refuse(400, message, { type: 'error', error: { type: 'invalid_request_error', message } });
      if (!isObject(body)) return invalid('The request body is not valid JSON.');
      if (body.anthropic_version !== VERTEX_VERSION) return invalid(`anthropic_version: Input should be '${VERTEX_VERSION}'`);
      if ('model' in body) return invalid('model: Extra inputs are not permitted');
      if ((method === 'streamRawPredict') !== (body.stream === true)) return invalid(`${method} ${method === 'streamRawPredict' ? 'needs' : 'takes no'} stream: true`);
      // Vertex AI runs Claude's web search only under its beta header (the message is this fake's own).
      const searches = Array.isArray(body.tools) && body.tools.some((tool) => isObject(tool) && String(tool.type).startsWith('web_search_'));
      if (searches && !String(request.headers['anthropic-beta'] ?? '').split(',').includes('web-search-2025-03-05')) {
        return invalid('tools: web search on Vertex AI needs the header anthropic-beta: web-search-2025-03-05');
      }
      const { anthropic_version: _version, ...rest } = body;
      const upstream = await forward(`${base.anthropicBaseURL}/v1/messages`, { 'x-api-key': 'cloud-fake', 'anthropic-version': '2023-06-01' }, { ...rest, model });
      recorded.status = upstream.status;
      return relay(reply, upstream);
    }

    const azure = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/.exec(path);
    const azureResponses = path === '/openai/responses';
    if ((azure || azureResponses) && request.method === 'POST') {
      recorded.cloud = 'azure';
      const azureError = (status: number, code: string, message: string) => refuse(status, message, { error: { code, message } });
      const apiKey = request.headers['api-key'];
      const authorization = request.headers.authorization;
      if (apiKey !== undefined ? apiKey !== options.azure.apiKey : authorization !== `Bearer ${options.azure.bearerToken}`) {
        return apiKey !== undefined || authorization === undefined
          ? azureError(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.')
          : azureError(401, 'PermissionDenied', 'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.');
      }
      const apiVersion = new URL(request.raw.url ?? '/', 'http://placeholder').searchParams.get('api-version');
      if (!apiVersion) return azureError(404, '404', 'Resource not found');
      if (!options.azure.apiVersions.includes(apiVersion)) return azureError(400, 'BadRequest', 'API version not supported');
      // The Responses API came with 2025-03-01-preview: older versions have no such route.
      if (azureResponses && apiVersion < '2025-03-01-preview') return azureError(404, '404', 'Resource not found');
      const body = parseJson(raw);
      if (!isObject(body)) return azureError(400, 'BadRequest', 'The request body is not valid JSON.');
      // Chat Completions name the deployment in the path; the Responses API in the body's model.
      const deployment = azure ? decodeURIComponent(azure[1]) : body.model;
      if (typeof deployment !== 'string' || !options.azure.deployments.includes(deployment)) {
        return azureError(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.');
      }
      const upstream = azure
        ? await forward(`${base.openaiBaseURL}/chat/completions`, { authorization: 'Bearer cloud-fake' }, body)
        : await forward(`${base.openaiBaseURL}/responses`, { authorization: 'Bearer cloud-fake' }, { ...body, model: options.azure.deploymentModels?.[deployment] ?? deployment });
      recorded.status = upstream.status;
      return relay(reply, upstream);
    }

    recorded.status = 404;
    recorded.errors.push(`no route ${request.method} ${path}`);
    return reply.code(404).send({ message: `cloud fake: no route ${request.method} ${path} (check the base URL)` });
  });

  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const url = address.replace('localhost', '127.0.0.1');
  return { url, tokenUrl: `${url}/v1/token`, requests, close: () => app.close() };
}

function forward(url: string, headers: Record<string, string>, body: Json): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

function retryHeaders(upstream: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ['retry-after', 'retry-after-ms']) {
    const value = upstream.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return headers;
}

/** The upstream answer as it comes, streamed or not, with its status and retry headers. */
async function relay(reply: FastifyReply, upstream: Response): Promise<FastifyReply> {
  reply.hijack();
  reply.raw.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json', ...retryHeaders(upstream) });
  if (upstream.body) for await (const piece of upstream.body as unknown as AsyncIterable<Uint8Array>) reply.raw.write(piece);
  reply.raw.end();
  return reply;
}

async function relayBedrockStream(reply: FastifyReply, upstream: Response): Promise<FastifyReply> {
  reply.hijack();
  reply.raw.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomBytes(16).toString('hex') });
  for await (const chunk of sseToBedrockChunks(upstream.body!)) reply.raw.write(chunk);
  reply.raw.end();
  return reply;
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);
