/**
 * The chaos tests' worker process (worker-process.ts) with AI SDK models: `flash3`, the real
 * `@ai-sdk/google` reaching the Gemini fake at GEMINI_BASE_URL with GEMINI_API_KEY. Each request
 * names the process that sent it (`x-turnpike-test-pid`), so a test can tell which worker made
 * which model call.
 */
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { chaosTools } from './chaos-tools.js';
import { runChaosWorker } from './chaos-worker.js';

const google = createGoogleGenerativeAI({
  baseURL: process.env.GEMINI_BASE_URL!,
  apiKey: process.env.GEMINI_API_KEY!,
  headers: { 'x-turnpike-test-pid': String(process.pid) },
});

await runChaosWorker({
  tools: chaosTools,
  models: { flash3: google('gemini-3-flash-preview') },
});
