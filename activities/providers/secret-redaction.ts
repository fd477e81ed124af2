/**
 * Credentials out of what a failed model step reports. A provider's error may echo one: Gemini's
 * 403 for a suspended key reads `Permission denied: Consumer 'api_key:<the whole key>' has been
 * suspended.`, OpenAI's 401 repeats a short key whole (`Incorrect API key provided: <key>.`), a
 * proxy may repeat the `Authorization` header it refused. What the model activity throws becomes
 * the failure in the turn's history (`ACTIVITY_TASK_FAILED`, then `WORKFLOW_EXECUTION_FAILED` when
 * the turn fails with it) and the worker's "Activity failed" log line, so every error a provider
 * call throws is redacted here first (`callModel`, activities/model.ts), whichever provider threw it:
 *
 * - every credential the worker knows becomes `[redacted]`: the providers' keys
 *   (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …), each endpoint's and Azure settings' `apiKeyEnv`,
 *   the remote MCP servers' `headersEnv`, the AWS credentials in the environment, any variable
 *   named `…_KEY`, `…_TOKEN`, `…_SECRET` or `…_PASSWORD`, and the tokens the worker's Entra ID
 *   token providers issued. Read at each failure, so a rotated key is covered; values shorter
 *   than 8 characters are no credential and are left alone;
 * - key-shaped tokens the worker may not know (an AI SDK model holds its own key) after `api_key:`
 *   / `api-key=`, `key=`, `Bearer ` and `API key provided: `, and Google OAuth access tokens (`ya29.…`).
 *
 * The failure keeps its type, retryability, `nextRetryDelay` and category; its causes (the SDKs'
 * errors) become plain errors with the same name, message, stack and plain fields (status, code,
 * request id), without the response bodies and headers an SDK error holds, which a logger prints.
 * A cancellation passes unchanged, so the worker still reports the activity cancelled.
 */
import { ApplicationFailure, CancelledFailure, TemporalFailure } from '@temporalio/common';
import type { CloudSettings } from './clouds.js';
import type { OpenAIEndpoints } from './endpoints.js';
import type { RemoteMcpServers } from './remote-mcp-servers.js';

export const REDACTED = '[redacted]';

/** Where a worker names its credentials (activities/model.ts `WorkerModels`). */
export interface CredentialSettings {
  endpoints?: OpenAIEndpoints;
  clouds?: CloudSettings;
  remoteMcpServers?: RemoteMcpServers;
}

/** Variables a provider SDK reads on its own, whatever the worker's settings say. */
const CREDENTIAL_VARIABLES = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'AZURE_OPENAI_API_KEY', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_BEARER_TOKEN_BEDROCK'];
/** Any other variable named as a credential is one. */
const CREDENTIAL_NAME = /(?:^|_)(?:KEY|TOKEN|SECRET|PASSWORD)$/i;
/** Shorter values are no credential (`none`, `1`, `true`), and replacing them would garble messages. */
const MIN_SECRET_LENGTH = 8;

/** Tokens the worker's Entra ID token providers issued lately (they expire within hours). */
const issuedTokens: string[] = [];
const ISSUED_TOKENS_KEPT = 32;

/** Remembers a token a token provider issued, so an error that echoes it is redacted; returns it. */
export function rememberIssuedToken(token: string): string {
  if (typeof token === 'string' && token.length >= MIN_SECRET_LENGTH && !issuedTokens.includes(token)) {
    issuedTokens.push(token);
    if (issuedTokens.length > ISSUED_TOKENS_KEPT) issuedTokens.shift();
  }
  return token;
}

/** Every credential value the worker knows now, longest first (so one inside another goes whole). */
export function workerSecrets(settings: CredentialSettings = {}, env: NodeJS.ProcessEnv = process.env): string[] {
  const names = new Set(CREDENTIAL_VARIABLES);
  for (const endpoint of Object.values(settings.endpoints ?? {})) if (endpoint.apiKeyEnv) names.add(endpoint.apiKeyEnv);
  for (const azure of Object.values(settings.clouds?.azure ?? {})) if (azure.apiKeyEnv) names.add(azure.apiKeyEnv);
  for (const server of Object.values(settings.remoteMcpServers ?? {})) for (const name of Object.values(server.headersEnv ?? {})) names.add(name);
  for (const name of Object.keys(env)) if (CREDENTIAL_NAME.test(name)) names.add(name);
  const values = new Set<string>(issuedTokens);
  for (const name of names) {
    const value = env[name]?.trim();
    if (!value) continue;
    values.add(value);
    // A header value (`Bearer <token>`) is echoed as either.
    const token = /^Bearer\s+(\S+)$/i.exec(value)?.[1];
    if (token) values.add(token);
  }
  return [...values].filter((value) => value.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** A token of at least 8 key characters, not ending in a sentence's full stop. */
const TOKEN = String.raw`(?=[A-Za-z0-9._~+/*-]{8})[A-Za-z0-9_~+/*-]+(?:\.[A-Za-z0-9_~+/*-]+)*=*`;
const KEY_SHAPED: RegExp[] = [
  // Google's `Consumer 'api_key:…'`, `api-key=…`, `"apiKey": "…"` (quotes allowed around the separator).
  new RegExp(String.raw`(\bapi[_-]?key["']?\s*[:=]\s*["']?)${TOKEN}`, 'gi'),
  // A URL's `?key=…` (Google's older key parameter).
  new RegExp(String.raw`(\bkey=)${TOKEN}`, 'gi'),
  new RegExp(String.raw`(\bBearer\s+)${TOKEN}`, 'gi'),
  // OpenAI's 401, whole for a short key, masked for a long one.
  new RegExp(String.raw`(\bAPI key provided:\s*)${TOKEN}`, 'gi'),
];
const GOOGLE_ACCESS_TOKEN = /\bya29\.[A-Za-z0-9._-]+/g;

/** `text` with every secret and every key-shaped token replaced by `[redacted]`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let redacted = text;
  for (const secret of secrets) if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
  for (const pattern of KEY_SHAPED) redacted = redacted.replace(pattern, `$1${REDACTED}`);
  return redacted.replace(GOOGLE_ACCESS_TOKEN, REDACTED);
}

/** What a provider call threw, redacted: the error to throw from the activity instead. */
export function redactedFailure(error: unknown, secrets: readonly string[]): unknown {
  if (typeof error === 'string') return redactText(error, secrets);
  if (!(error instanceof Error) || isCancellation(error)) return error;
  return redactedError(error, secrets, 0);
}

function isCancellation(error: Error): boolean {
  return error instanceof CancelledFailure || error.name === 'AbortError';
}

/** Causes deeper than this are cut: an SDK's chain is a few errors long. */
const MAX_CAUSES = 8;

function redactedError(error: Error, secrets: readonly string[], depth: number): Error {
  const cause = error.cause instanceof Error && depth < MAX_CAUSES ? redactedError(error.cause, secrets, depth + 1) : undefined;
  const message = redactText(error.message, secrets);
  let copy: Error;
  if (error instanceof ApplicationFailure) {
    copy = new ApplicationFailure(message, error.type, error.nonRetryable, error.details, cause, error.nextRetryDelay, error.category);
  } else if (error instanceof TemporalFailure || isCancellation(error)) {
    // Other Temporal failures keep their class, which is how they are reported.
    error.message = message;
    error.stack = error.stack && redactText(error.stack, secrets);
    return error;
  } else {
    copy = new Error(message, cause ? { cause } : undefined);
    copy.name = error.name;
    for (const [field, value] of Object.entries(error)) {
      if (field === 'cause' || field === 'name') continue;
      if (typeof value === 'number' || typeof value === 'boolean') Object.assign(copy, { [field]: value });
      else if (typeof value === 'string') Object.assign(copy, { [field]: redactText(value, secrets) });
    }
  }
  copy.stack = error.stack === undefined ? undefined : redactText(error.stack, secrets);
  return copy;
}
