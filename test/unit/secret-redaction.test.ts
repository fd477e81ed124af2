/**
 * What a failed model step may report (activities/providers/secret-redaction.ts): the credentials
 * the worker knows and key-shaped tokens are redacted from the failure, its causes and their
 * stacks; what Temporal's retries read (type, retryability, delay, category) is kept.
 */
import { ApplicationFailure, ApplicationFailureCategory, CancelledFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { REDACTED, redactedFailure, redactText, rememberIssuedToken, workerSecrets } from '../../activities/providers/secret-redaction.js';

const GEMINI_KEY = 'AIzaSyD-unit-test-Gemini-key-0123456789';

describe('redactText', () => {
  it.each([
    [`Permission denied: Consumer 'api_key:${GEMINI_KEY}' has been suspended.`, `Permission denied: Consumer 'api_key:${REDACTED}' has been suspended.`],
    [`"containerInfo": "api_key:${GEMINI_KEY}"`, `"containerInfo": "api_key:${REDACTED}"`],
    [`POST https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent?key=${GEMINI_KEY}&alt=sse`, `POST https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent?key=${REDACTED}&alt=sse`],
    ['header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig-part_x was refused', `header Authorization: Bearer ${REDACTED} was refused`],
    ['Incorrect API key provided: sk-short9. You can find your API key at https://platform.openai.com/account/api-keys.', `Incorrect API key provided: ${REDACTED}. You can find your API key at https://platform.openai.com/account/api-keys.`],
    ['Incorrect API key provided: sk-proj-********************abcd. You can find', `Incorrect API key provided: ${REDACTED}. You can find`],
    ['token ya29.a0AfH6SMB-xyz_123 expired', `token ${REDACTED} expired`],
    ['{"x-api-key": "sk-ant-abcdefgh1234"}', `{"x-api-key": "${REDACTED}"}`],
  ])('redacts a key-shaped token the worker does not know: %s', (text, expected) => {
    expect(redactText(text, [])).toBe(expected);
  });

  it('leaves words that only look like the markers, and short tokens, alone', () => {
    for (const text of ['monkey=bananas-and-more', 'the key=short', 'Bearer token missing', 'Incorrect API key provided: Toxic.']) expect(redactText(text, [])).toBe(text);
  });

  it('redacts every known secret wherever it appears, the longest first', () => {
    const secrets = ['sk-test-openai-SECRET-4f1c9a', 'SECRET-4f1c9a'].sort((a, b) => b.length - a.length);
    expect(redactText('got sk-test-openai-SECRET-4f1c9a and SECRET-4f1c9a twice: sk-test-openai-SECRET-4f1c9a', secrets)).toBe(`got ${REDACTED} and ${REDACTED} twice: ${REDACTED}`);
  });
});

describe('workerSecrets', () => {
  it("reads the providers', endpoints', clouds' and remote MCP servers' credentials, and variables named as credentials", () => {
    const env = {
      OPENAI_API_KEY: 'sk-openai-0000001',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-api-key-42',
      VLLM_CREDS: 'vllm-credential-1',
      AZURE_PROD: 'azure-credential-2',
      DEEPWIKI_AUTH: 'Bearer deepwiki-token-3',
      GEMINI_API_KEY: 'AIza-gemini-key-4',
      PLAIN_TOKEN: 'short',
      HOME: '/home/someone-long-path',
    };
    const secrets = workerSecrets(
      {
        endpoints: { vllm: { baseURL: 'http://vllm:8000/v1', apiKeyEnv: 'VLLM_CREDS' } },
        clouds: { azure: { prod: { endpoint: 'https://r.openai.azure.com', apiKeyEnv: 'AZURE_PROD' } } },
        remoteMcpServers: { deepwiki: { url: 'https://mcp.deepwiki.com/mcp', headersEnv: { Authorization: 'DEEPWIKI_AUTH' } } },
      },
      env,
    );
    for (const value of ['sk-openai-0000001', 'wJalrXUtnFEMI/K7MDENG', 'bedrock-api-key-42', 'vllm-credential-1', 'azure-credential-2', 'Bearer deepwiki-token-3', 'deepwiki-token-3', 'AIza-gemini-key-4']) expect(secrets).toContain(value);
    expect(secrets).not.toContain('short');
    expect(secrets).not.toContain('/home/someone-long-path');
  });

  it('includes the tokens an Entra ID token provider issued', () => {
    expect(rememberIssuedToken('entra-issued-token-5')).toBe('entra-issued-token-5');
    expect(workerSecrets({}, {})).toContain('entra-issued-token-5');
  });
});

describe('redactedFailure', () => {
  it("keeps the failure's type, retryability, delay and category, and redacts it and its causes without their bodies", () => {
    const sdkError = Object.assign(new Error(`403 Permission denied: Consumer 'api_key:${GEMINI_KEY}' has been suspended.`), {
      statusCode: 403,
      isRetryable: false,
      responseBody: JSON.stringify({ error: { message: `Consumer 'api_key:${GEMINI_KEY}'` } }),
      requestBodyValues: { contents: [] },
      responseHeaders: { 'x-goog-api-key': GEMINI_KEY },
    });
    sdkError.name = 'AI_APICallError';
    const failure = new ApplicationFailure(`ai-sdk gemini: 403 Forbidden — Permission denied: Consumer 'api_key:${GEMINI_KEY}' has been suspended.`, 'ProviderAuthenticationError', true, undefined, sdkError, 1500, ApplicationFailureCategory.BENIGN);

    const redacted = redactedFailure(failure, ['sk-known-secret-1']) as ApplicationFailure;

    expect(redacted).toBeInstanceOf(ApplicationFailure);
    expect(redacted).toMatchObject({ type: 'ProviderAuthenticationError', nonRetryable: true, nextRetryDelay: 1500, category: ApplicationFailureCategory.BENIGN });
    expect(redacted.message).toBe(`ai-sdk gemini: 403 Forbidden — Permission denied: Consumer 'api_key:${REDACTED}' has been suspended.`);
    const cause = redacted.cause as Error & Record<string, unknown>;
    expect(cause).toMatchObject({ name: 'AI_APICallError', statusCode: 403, isRetryable: false });
    expect(cause.requestBodyValues).toBeUndefined();
    expect(cause.responseHeaders).toBeUndefined();
    const everything = [redacted.message, redacted.stack, cause.message, cause.stack, cause.responseBody].join('\n');
    expect(everything).not.toContain(GEMINI_KEY);
    expect(redacted.stack).toContain('secret-redaction.test.ts');
  });

  it('redacts a known secret from a plain error, keeping its name for the retry policy', () => {
    const redacted = redactedFailure(new TypeError('Invalid header value: Bearer sk-known-secret-1'), ['sk-known-secret-1']) as Error;
    expect(redacted.name).toBe('TypeError');
    expect(redacted.message).toBe(`Invalid header value: Bearer ${REDACTED}`);
  });

  it('passes a cancellation through unchanged', () => {
    const cancelled = new CancelledFailure('Activity cancelled');
    expect(redactedFailure(cancelled, ['sk-known-secret-1'])).toBe(cancelled);
  });
});
