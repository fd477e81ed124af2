/**
 * Starts the fake provider server and points the real OpenAI and Anthropic SDKs at it through
 * the worker's environment (the test's Worker runs in the test process and reads keys and base
 * URLs at call time). `restore()` puts the environment back.
 */
import { startFakeProviderServer, type FakeProviderServer } from '../fake-provider/server.js';

export const TEST_KEYS = { openai: 'sk-test-openai-SECRET-4f1c9a', anthropic: 'sk-ant-test-SECRET-77be02' };

export async function useFakeProviders(): Promise<FakeProviderServer & { restore(): Promise<void> }> {
  const saved = { ...process.env };
  const fake = await startFakeProviderServer();
  process.env.OPENAI_API_KEY = TEST_KEYS.openai;
  process.env.OPENAI_BASE_URL = fake.openaiBaseURL;
  process.env.ANTHROPIC_API_KEY = TEST_KEYS.anthropic;
  process.env.ANTHROPIC_BASE_URL = fake.anthropicBaseURL;
  return Object.assign(fake, {
    async restore() {
      await fake.close();
      process.env = saved;
    },
  });
}
