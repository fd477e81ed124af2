/**
 * The packages that only some applications need are optional peer dependencies of turnpike
 * (package.json `peerDependenciesMeta`): an application installs the provider SDK it calls, the
 * MCP SDK if its worker declares MCP servers, the HTTP API's packages if it serves
 * `turnpike/api`, `pg` or `@aws-sdk/client-s3` if its content store is in PostgreSQL or S3, and `ai` if a
 * client reads typed answers as partial objects (`outputStream`, or `/api/chat` for `useChat`: its partial-JSON parser), and an AI SDK provider package (which brings `@ai-sdk/provider`) if its worker registers AI SDK `models`. Code that needs one loads it on first use through {@link importOptional}, so a
 * missing package is reported by name, with the command that installs it, instead of as Node's
 * module-resolution error from deep inside turnpike.
 */
import { ApplicationFailure } from '@temporalio/common';

/** Each optional peer and the range package.json declares for it (a unit test keeps them equal). */
export const OPTIONAL_PEERS = {
  openai: '^6.30.1',
  '@anthropic-ai/sdk': '^1.12.0',
  '@modelcontextprotocol/sdk': '^1.32.2',
  fastify: '^5.12.8',
  'fastify-type-provider-zod': '^7.0.0',
  jose: '^6.2.17',
  '@fastify/secure-session': '^8.4.0',
  'openid-client': '^6.9.0',
  pg: '^8.23.1',
  '@aws-sdk/client-s3': '^3.1169.0',
  ai: '^7.0.173',
  // Types only: the spec an `ai-sdk` model implements. The application's AI SDK provider package
  // (`@ai-sdk/google`, …) brings it; turnpike loads none of it at run time.
  '@ai-sdk/provider': '^4.0.38',
  '@anthropic-ai/bedrock-sdk': '^1.1.3',
  '@anthropic-ai/vertex-sdk': '^1.1.3',
  '@slack/web-api': '^8.2.0',
  '@temporalio/testing': '^1.24.0',
  '@a2a-js/sdk': '^1.3.0',
} as const;

export type OptionalPeer = keyof typeof OPTIONAL_PEERS;

/** `ApplicationFailure.type` of the failure: non-retryable, since retrying cannot install a package. */
export const MISSING_PACKAGE = 'MissingPackage';

/**
 * Runs `load` (a dynamic import of the module that imports `packages`) and, when one of those
 * packages is not installed, throws a non-retryable `ApplicationFailure` of type
 * {@link MISSING_PACKAGE} that names it: `The model provider "anthropic" needs @anthropic-ai/sdk,
 * which is not installed: npm install @anthropic-ai/sdk@^1.12.0`. Any other error passes through.
 */
export async function importOptional<Module>(feature: string, packages: readonly OptionalPeer[], load: () => Promise<Module>): Promise<Module> {
  try {
    return await load();
  } catch (error) {
    const missing = packages.find((name) => isMissingPackage(error, name));
    if (!missing) throw error;
    const install = packages.map((name) => `${name}@${OPTIONAL_PEERS[name]}`).join(' ');
    throw ApplicationFailure.create({
      message: `${feature} needs ${missing}, which is not installed: npm install ${install}`,
      type: MISSING_PACKAGE,
      nonRetryable: true,
      cause: error instanceof Error ? error : undefined,
    });
  }
}

/** Node's error for an import of a package that is not installed (`Cannot find package 'openai' imported from ...`). */
function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${name}'`);
}
