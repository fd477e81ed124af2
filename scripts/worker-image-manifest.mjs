// `node scripts/worker-image-manifest.mjs <file>`: the package.json of the Docker image (Dockerfile,
// final stage). The repository's manifest, with what the compiled demo worker needs at run time made
// production dependencies, so that `npm install --omit=dev` with the repository's lockfile installs
// those at their locked versions and no development tool. They are devDependencies in the
// repository only because turnpike declares them as peers: the Temporal SDK and zod (its required
// peers) and the two provider SDKs (optional peers; docker-compose.yml passes both keys). The demo
// worker serves no HTTP API and declares no MCP server, so their optional peers stay out.
import { readFileSync, writeFileSync } from 'node:fs';

const [output] = process.argv.slice(2);
if (!output) throw new Error('usage: node scripts/worker-image-manifest.mjs <output package.json>');
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const optional = (name) => manifest.peerDependenciesMeta?.[name]?.optional === true;
const needed = [...Object.keys(manifest.peerDependencies).filter((name) => !optional(name)), 'openai', '@anthropic-ai/sdk'];

const dependencies = { ...manifest.dependencies };
for (const name of needed) {
  const pinned = manifest.devDependencies[name];
  if (!pinned) throw new Error(`${name} is not pinned in devDependencies`);
  dependencies[name] = pinned;
}
const sorted = (entries) => Object.fromEntries(Object.entries(entries).sort(([a], [b]) => a.localeCompare(b)));
const image = {
  name: 'turnpike-worker-image',
  version: manifest.version,
  private: true,
  type: manifest.type,
  engines: manifest.engines,
  dependencies: sorted(dependencies),
  // No devDependencies: npm would still read their engines (some want Node 22) and warn. The tree
  // installed with the lockfile is the same either way.
  // The repository's overrides (for a devDependency) keep the lockfile's tree valid.
  overrides: manifest.overrides,
};
writeFileSync(output, `${JSON.stringify(image, null, 2)}\n`);
