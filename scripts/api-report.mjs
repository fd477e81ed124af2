// `npm run api-report`: the public API of each entry point (package.json "exports"), as
// @microsoft/api-extractor reads it from the .d.ts files that `npm run build` would publish,
// written to api-report/<entry>.api.md. `npm run api-report -- --check` (CI, before `npm test`)
// writes nothing: it fails with a diff when an entry point's API differs from its committed
// report, so a renamed or changed export is a reviewed change, never an accident.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const reportFolder = path.join(root, 'api-report');
// Inside the repository, so that the .d.ts files resolve their imports from its node_modules.
const work = path.join(root, '.api-report');

/** Each entry point of the package, by the name its report is filed under. */
const ENTRY_POINTS = {
  turnpike: 'index.d.ts',
  'turnpike-worker': 'worker/index.d.ts',
  'turnpike-client': 'client/index.d.ts',
  'turnpike-workflows': 'workflows/index.d.ts',
  'turnpike-api': 'api/index.d.ts',
  'turnpike-testing': 'testing/index.d.ts',
};

// The declarations of the build (tsconfig.build.json), without its JavaScript.
rmSync(path.join(work, 'reports'), { recursive: true, force: true });
if (!process.argv.includes('--keep-declarations')) {
  rmSync(work, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--outDir', path.join(work, 'dts')], { stdio: 'inherit' });
  } catch {
    console.error('api-report: the published code does not compile (above); its API cannot be read.');
    process.exit(1);
  }
}

const configFor = (name, entry) =>
  ExtractorConfig.prepare({
    configObjectFullPath: path.join(root, 'api-extractor.json'),
    packageJsonFullPath: path.join(root, 'package.json'),
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: path.join(work, 'dts', entry),
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: true, types: ['node'], lib: ['es2023', 'dom'] },
          files: Object.values(ENTRY_POINTS).map((file) => path.join(work, 'dts', file)),
        },
      },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder, reportTempFolder: path.join(work, 'reports') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      newlineKind: 'lf',
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          // Names the report mentions but the entry point does not export: listed in the report.
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-internal-missing-underscore': { logLevel: 'none' },
          'ae-unresolved-link': { logLevel: 'none' },
          'ae-undocumented': { logLevel: 'none' },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });

mkdirSync(path.join(work, 'reports'), { recursive: true });
mkdirSync(reportFolder, { recursive: true });
const configs = Object.entries(ENTRY_POINTS).map(([name, entry]) => [name, configFor(name, entry)]);
const compilerState = CompilerState.create(configs[0][1], { additionalEntryPoints: configs.map(([, config]) => config.mainEntryPointFilePath) });

const changed = [];
let problems = 0;
for (const [name, config] of configs) {
  const result = Extractor.invoke(config, {
    localBuild: !check,
    compilerState,
    messageCallback: (message) => {
      // A report that differs is shown as a diff below, not as api-extractor's advice.
      if (message.messageId.startsWith('console-api-report-')) message.logLevel = ExtractorLogLevel.None;
      if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) problems += 1;
    },
  });
  if (result.apiReportChanged) changed.push(name);
}

if (check && changed.length > 0) {
  for (const name of changed) {
    const committed = path.join(reportFolder, `${name}.api.md`);
    const current = path.join(work, 'reports', `${name}.api.md`);
    if (!existsSync(committed)) writeFileSync(committed + '.missing', '');
    try {
      const shown = [existsSync(committed) ? committed : committed + '.missing', current].map((file) => path.relative(root, file));
      execFileSync('git', ['--no-pager', 'diff', '--no-index', '--no-color', ...shown], { stdio: 'inherit', cwd: root });
    } catch {
      // git diff --no-index exits 1 when the files differ: the diff is the message.
    } finally {
      rmSync(committed + '.missing', { force: true });
    }
  }
  console.error(`\nThe public API of ${changed.map((name) => name.replace('-', '/')).join(', ')} differs from api-report/ (above: - committed, + the code).`);
  console.error('If the change is meant, run `npm run api-report`, commit api-report/ and note it in CHANGELOG.md.');
  process.exit(1);
}
if (problems > 0) {
  console.error(`api-extractor reported ${problems} problem(s) above.`);
  process.exit(1);
}
if (!process.argv.includes('--keep-declarations')) rmSync(work, { recursive: true, force: true });
console.log(check ? 'api-report: every entry point matches its report' : `api-report: ${changed.length ? `updated ${changed.join(', ')}` : 'no change'}`);
