/**
 * Named remote MCP servers of a worker (`remoteMcpServers` on `createWorker` / `TurnpikePlugin`),
 * for the Responses API's hosted `mcp` tool: OpenAI calls the server itself. A turn names one
 * (`providerTools: [{ type: 'mcp', server_label: 'deepwiki', require_approval: 'always' }]`); its URL
 * and the environment variables holding its headers stay in the worker, so no credential enters a
 * turn's history. Loads no SDK.
 */

/** A remote MCP server OpenAI may call for a turn that names it (`server_label`). */
export interface RemoteMcpServer {
  /** The server's URL, e.g. `https://mcp.deepwiki.com/mcp`. */
  url: string;
  /**
   * Headers OpenAI sends to the server, by header name: each value is the name of the
   * environment variable that holds it, read at every call (e.g. `{ Authorization: 'DEEPWIKI_AUTH' }`,
   * the variable holding `Bearer …`).
   */
  headersEnv?: Record<string, string>;
  /** Told to the model (`server_description`). */
  description?: string;
}

export type RemoteMcpServers = Record<string, RemoteMcpServer>;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks the worker's `remoteMcpServers` when it is created; throws a TypeError naming the bad entry. */
export function checkedRemoteMcpServers(servers: RemoteMcpServers, where: string): RemoteMcpServers {
  if (typeof servers !== 'object' || servers === null) throw new TypeError(`${where}: remoteMcpServers must be an object of { url, headersEnv? } by name`);
  for (const [name, server] of Object.entries(servers)) {
    let url: URL | undefined;
    try {
      url = new URL(server?.url);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new TypeError(`${where}: remoteMcpServers["${name}"].url must be an http(s) URL`);
    for (const [header, env] of Object.entries(server.headersEnv ?? {})) {
      if (typeof env !== 'string' || !ENV_NAME.test(env)) throw new TypeError(`${where}: remoteMcpServers["${name}"].headersEnv["${header}"] must be the name of an environment variable`);
    }
  }
  return servers;
}
