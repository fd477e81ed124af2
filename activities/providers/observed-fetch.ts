/**
 * The `fetch` turnpike's provider clients send with: it hands each response's status and headers
 * to whoever is watching the current model call (worker/provider-headers.ts, when the worker
 * follows the providers' rate-limit headers), and changes nothing else. Outside a watched call it
 * is `fetch`.
 *
 * For AI SDK models, which the application builds, pass it to the provider package to have their
 * headers followed too: `createOpenAI({ fetch: providerObservedFetch })`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** Sees every response of a model call: successes (remaining counts) and 429s (`retry-after`) alike. */
export type ProviderResponseObserver = (status: number, headers: Headers) => void;

const observers = new AsyncLocalStorage<ProviderResponseObserver>();

/** Runs `call` with `observer` seeing each provider response it gets. */
export function observingProviderResponses<T>(observer: ProviderResponseObserver, call: () => T): T {
  return observers.run(observer, call);
}

/** `fetch`, telling the model call it runs in each response's status and headers: give it to an AI SDK provider package to have its headers followed. */
export const providerObservedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const observer = observers.getStore();
  if (observer) {
    try {
      observer(response.status, response.headers);
    } catch {
      // Watching a response never fails the call.
    }
  }
  return response;
};
