/** What the workers and the client send to the fake OpenAI server (fake-openai.ts); no server code, so workers can import it. */

/** The key the workers send; the fake only checks that there is one. */
export const FAKE_OPENAI_KEY = 'sk-bench-fake';
/** The model name both HTTP-backed systems ask for. */
export const FAKE_OPENAI_MODEL = 'gpt-4o-mini';
/** The name turnpike's bench worker registers its AI SDK model under (`@ai-sdk/openai` Chat Completions on the fake), for the ai-sdk-model figure. */
export const AI_SDK_MODEL_NAME = 'openai-chat';
