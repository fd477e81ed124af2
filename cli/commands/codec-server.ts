/**
 * `codec-server`: serves turnpike's payload codec over Temporal's codec-server protocol, so
 * operators read compressed turn inputs and results as JSON in the CLI and the Web UI.
 */
import type { Command } from 'commander';
import { importOptional } from '../../peers/optional-packages.js';
import { parsePositive } from '../arguments.js';
import type { CliContext } from '../context.js';

interface CodecServerOptions {
  host: string;
  port: number;
  allowOrigin: string[];
}

export function registerCodecServerCommand(program: Command, context: CliContext): void {
  program
    .command('codec-server')
    .description('serve turnpike\'s payload codec to the Temporal CLI (--codec-endpoint) and Web UI; runs until Ctrl-C')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on', parsePositive, 8888)
    .option('--allow-origin <origin...>', 'browser origins allowed to call it (the Web UI\'s)', ['http://localhost:8233', 'http://127.0.0.1:8233'])
    .addHelpText(
      'after',
      `
With TURNPIKE_CODEC_TOKENS="<token>:<name>,..." set, every request must send Authorization: Bearer <token>.

  turnpike codec-server --port 8888
  temporal workflow show --workflow-id <turn> --codec-endpoint http://127.0.0.1:8888`,
    )
    .action(async (options: CodecServerOptions) => {
      // The HTTP API's packages are optional peer dependencies: loaded here, so the other commands run without them.
      const [{ parseTokenMap }, { buildCodecServer }] = await importOptional('turnpike codec-server', ['fastify', 'jose'], () =>
        Promise.all([import('../../api/auth.js'), import('../../api/codec-server.js')]),
      );
      const tokens = parseTokenMap(process.env.TURNPIKE_CODEC_TOKENS);
      const server = await buildCodecServer({ allowOrigins: options.allowOrigin, ...(tokens.size > 0 ? { tokens } : {}) });
      const address = await server.listen({ host: options.host, port: options.port });
      context.print({ codecEndpoint: address, allowOrigins: options.allowOrigin, authentication: tokens.size > 0 }, () =>
        `turnpike codec server on ${address} (origins: ${options.allowOrigin.join(', ')}${tokens.size > 0 ? '; bearer tokens required' : ''})\n` +
        `  temporal workflow show --workflow-id <turn> --codec-endpoint ${address}`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
    });
}
