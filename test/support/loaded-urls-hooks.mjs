// Module hooks (node:module register) that report every URL the ESM loader resolves, so a test
// can see which packages a script loaded: require.cache shows only CommonJS modules.
let port;
export function initialize(data) {
  port = data.port;
}
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  port.postMessage(result.url);
  return result;
}
