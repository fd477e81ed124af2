/**
 * The AI SDK language models a worker registers by name (`models` on `createWorker` /
 * `TurnpikePlugin`), apart from the provider (ai-sdk.ts) so that the worker's entry point loads
 * nothing of it. It names no type of `@ai-sdk/provider` either: the worker's published types must
 * compile in an application that uses no AI SDK model and so has no `@ai-sdk/provider`.
 */

/**
 * A language model of the AI SDK's provider specification, v4 (AI SDK 7) or v3 (AI SDK 6),
 * described by the members turnpike relies on: every `LanguageModelV4` and `LanguageModelV3` is
 * one. The provider (ai-sdk.ts) reads it as the spec's own type.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/** The worker's AI SDK models, by the names turns use (`model: { provider: 'ai-sdk', model: '<name>' }`). */
export type AiSdkModels = Record<string, AiSdkLanguageModel>;

/** Checks the worker's `models` when it is created; throws a TypeError naming the bad entry. */
export function checkedModels(models: AiSdkModels, where: string): AiSdkModels {
  if (typeof models !== 'object' || models === null) throw new TypeError(`${where}: models must be an object of AI SDK language models by name`);
  for (const [name, model] of Object.entries(models)) {
    const version = (model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
    if (typeof model?.doStream !== 'function' || typeof model.doGenerate !== 'function' || (version !== 'v3' && version !== 'v4')) {
      throw new TypeError(
        `${where}: models["${name}"] must be an AI SDK language model of specification v3 or v4 (e.g. google('gemini-2.5-flash') from @ai-sdk/google); got ${version === undefined ? typeof model : `specification ${String(version)}`}`,
      );
    }
  }
  return models;
}
