/**
 * `docs/contract.md` against the code, in both directions: every name a marked table of the
 * contract lists is one the code registers, and every name the code registers is listed.
 *
 * The doc marks each checked table with `<!-- contract: <category> -->` on the line above it;
 * the first column holds the name in backticks. Its `ts` blocks declare the shapes, and each
 * declared interface or type must have the code's exported type of the same name: the same
 * properties, the same optional ones, the same literal values.
 *
 * Where the names come from:
 * - values the code exports, read at run time: the update, signal and query definitions (their
 *   `.name`) and the search attribute keys of every module under `workflows/`; the workflow
 *   functions of `workflows/registered-workflows.ts` (what `createWorker` bundles), which
 *   `turnpike/workflows` must export too; `REJECTION_TYPES`, `TURN_STATUSES`, `*_MEMO_KEY` and
 *   `*_TOPIC` constants; the activities `createActivities` returns; the handlers
 *   event stream registers (workflows/stream/stream-guard.ts); the entry points of `package.json`.
 * - types, which exist only as TypeScript (the turn and conversation event unions, the providers,
 *   the input and output of each message and activity): read from the source with the TypeScript
 *   compiler, by exported name, wherever the code declares them. No code outside this test was
 *   added for it. The program parses only turnpike's own `workflows/`, `activities/`, `index.ts`
 *   (`noResolve`), so it stays a few seconds.
 * - failure types and memo keys: the `type` of every `ApplicationFailure` that `workflows/`, `peers/` and
 *   `activities/` throw, and the keys `workflows/` pass to `upsertMemo`, read from the source
 *   (string literals and the constants they name).
 */
import * as clientModule from '../../client/index.js';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SearchAttributeType } from '@temporalio/common';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../activities/index.js';
import * as registeredWorkflows from '../../workflows/registered-workflows.js';
import * as workflowsEntry from '../../workflows/index.js';
import { REJECTION_TYPES, TURN_STATUSES } from '../../workflows/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC_PATH = join(ROOT, 'docs', 'contract.md');
const DOC = readFileSync(DOC_PATH, 'utf8');
const NONE = '—';

// ---- the doc --------------------------------------------------------------------------------

/** Rows of each marked table, by category (tables of the same category are joined), header and rule left out. */
function markedTables(doc: string): Map<string, string[][]> {
  const tables = new Map<string, string[][]>();
  const lines = doc.split('\n');
  for (const [index, line] of lines.entries()) {
    const marker = /^<!-- contract: ([a-z-]+) -->$/.exec(line.trim());
    if (!marker) continue;
    let at = index + 1;
    while (at < lines.length && lines[at].trim() === '') at++;
    const rows: string[][] = [];
    for (; at < lines.length && lines[at].trim().startsWith('|'); at++) rows.push(cells(lines[at]));
    if (rows.length < 2) throw new Error(`docs/contract.md: the table marked "${marker[1]}" is missing`);
    tables.set(marker[1], [...(tables.get(marker[1]) ?? []), ...rows.slice(2)]);
  }
  return tables;
}

/** The cells of a table row; `\|` is a pipe inside a cell. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, '|'));
}

/** What a cell holds in backticks (one span), or `—` for a cell without any. */
function codeIn(cell: string): string {
  const spans = [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
  if (spans.length > 1) throw new Error(`docs/contract.md: one name per cell, found ${spans.join(', ')} in "${cell}"`);
  return spans.length === 0 ? NONE : normalize(spans[0]);
}

function normalize(typeText: string): string {
  return typeText.replace(/\s+/g, ' ').replace(/\s*([<>[\],|?])\s*/g, '$1').replace(/,/g, ', ').replace(/\|/g, ' | ').trim();
}

const TABLES = markedTables(DOC);

function rows(category: string): string[][] {
  const found = TABLES.get(category);
  if (!found) throw new Error(`docs/contract.md has no table marked <!-- contract: ${category} -->`);
  return found;
}

/** The first column's names of a category, sorted; a name listed twice fails. */
function listed(category: string): string[] {
  const names = rows(category).map((row) => codeIn(row[0]));
  expect(names.filter((name, index) => names.indexOf(name) !== index), `${category}: listed twice`).toEqual([]);
  return [...names].sort();
}

/** The `ts` blocks of the doc, as one module. */
const DOC_SHAPES = [...DOC.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]).join('\n') + '\nexport {};\n';

// ---- the code's values ----------------------------------------------------------------------

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(ROOT, folder, file))
    .sort();
}

/** Every module under workflows/, loaded: the definitions and constants may live in any of them. */
const workflowModules: Array<Record<string, unknown>> = await Promise.all(sourceFiles('workflows').map((file) => import(file)));

function exportedValues(): Array<[string, unknown]> {
  return workflowModules.flatMap((module) => Object.entries(module));
}

type MessageKind = 'update' | 'signal' | 'query';

function isMessageDefinition(value: unknown): value is { type: MessageKind; name: string } {
  const candidate = value as { type?: unknown; name?: unknown } | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.name === 'string' && ['update', 'signal', 'query'].includes(candidate.type as string);
}

/** `<kind> <name>` of each definition among `exports`, with the export's identifier. */
function messageDefinitions(exports: Array<[string, unknown]>): Map<string, string> {
  const found = new Map<string, string>();
  for (const [identifier, value] of exports) if (isMessageDefinition(value)) found.set(`${value.type} ${value.name}`, identifier);
  return found;
}

function constantsNamed(pattern: RegExp): string[] {
  return [...new Set(exportedValues().filter(([key, value]) => pattern.test(key) && typeof value === 'string').map(([, value]) => value as string))].sort();
}

// ---- the code's types -----------------------------------------------------------------------

const DOC_FILE = join(ROOT, 'docs', 'contract-shapes.ts');
/** The event stream's messages, by the names `@temporalio/workflow-streams` gave them: listed in their own table. */
const isStreamMessage = (name: string) => name.includes('__temporal_workflow_stream_');

interface Types {
  checker: ts.TypeChecker;
  program: ts.Program;
  /** Exported symbols of turnpike's sources, by name, aliases resolved. */
  exported: Map<string, ts.Symbol[]>;
  /** The doc's declared types, by name. */
  documented: Map<string, ts.Symbol>;
}

let types: Types;

beforeAll(() => {
  const roots = [join(ROOT, 'index.ts'), ...sourceFiles('workflows'), ...sourceFiles('activities'), ...sourceFiles('client'), ...sourceFiles('content'), ...sourceFiles('peers'), DOC_FILE];
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    types: [],
    strict: true,
    noEmit: true,
    // Only the files above: imports of packages stay unresolved, which the checks here never need.
    noResolve: true,
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, language, ...rest) =>
    resolve(name) === DOC_FILE ? ts.createSourceFile(name, DOC_SHAPES, language) : getSourceFile.call(host, name, language, ...rest);
  host.fileExists = (name) => resolve(name) === DOC_FILE || fileExists.call(host, name);
  host.readFile = (name) => (resolve(name) === DOC_FILE ? DOC_SHAPES : readFile.call(host, name));
  const program = ts.createProgram(roots, options, host);
  const checker = program.getTypeChecker();
  const exported = new Map<string, ts.Symbol[]>();
  const documented = new Map<string, ts.Symbol>();
  for (const file of roots) {
    const source = program.getSourceFile(file)!;
    if (file === DOC_FILE) {
      for (const statement of source.statements) {
        if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) documented.set(statement.name.text, checker.getSymbolAtLocation(statement.name)!);
      }
      continue;
    }
    const module = checker.getSymbolAtLocation(source);
    for (const symbol of module ? checker.getExportsOfModule(module) : []) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const known = exported.get(symbol.name) ?? [];
      if (!known.includes(target)) exported.set(symbol.name, [...known, target]);
    }
  }
  types = { checker, program, exported, documented };
});

/** The one exported symbol of this name (a type, or a value with `flags`). */
function codeSymbol(name: string, flags: ts.SymbolFlags): ts.Symbol {
  const found = (types.exported.get(name) ?? []).filter((symbol) => symbol.flags & flags);
  if (found.length !== 1) throw new Error(`the code exports ${found.length} declarations named ${name}`);
  return found[0];
}

/** The string literals a type admits (undefined left out), or undefined when it admits anything else. */
function literals(type: ts.Type): string[] | undefined {
  const members = (type.isUnion() ? type.types : [type]).filter((member) => !(member.flags & ts.TypeFlags.Undefined));
  if (members.length === 0 || !members.every((member) => member.isStringLiteral() || member.isNumberLiteral())) return undefined;
  return members.map((member) => JSON.stringify((member as ts.LiteralType).value)).sort();
}

/**
 * A type as the contract states it: literal values, or for an object its properties (`?` when
 * optional, `=` and the values for one that holds literals only) and whether it takes any key;
 * a union is its members. Property types other than literals are the doc's to explain.
 */
function shape(type: ts.Type): string {
  const { checker } = types;
  const members = type.isUnion() && !(type.flags & ts.TypeFlags.Boolean) ? type.types : [type];
  const described = members.map((member) => {
    if (member.isStringLiteral() || member.isNumberLiteral()) return JSON.stringify(member.value);
    if (member.flags & ts.TypeFlags.BooleanLiteral) return 'boolean';
    if (!(member.flags & ts.TypeFlags.Object || member.flags & ts.TypeFlags.Intersection) || checker.isArrayType(member)) return checker.typeToString(member);
    const properties = checker.getPropertiesOfType(member).map((property) => {
      const values = literals(checker.getTypeOfSymbol(property));
      return `${property.name}${property.flags & ts.SymbolFlags.Optional ? '?' : ''}${values ? ` = ${values.join(' | ')}` : ''}`;
    });
    const index = checker.getIndexInfosOfType(member).length > 0 ? ['[key]'] : [];
    return `{ ${[...properties.sort(), ...index].join('; ')} }`;
  });
  return [...new Set(described)].sort().join(' | ');
}

function declaredShape(symbol: ts.Symbol): string {
  return shape(types.checker.getDeclaredTypeOfSymbol(symbol));
}

/** A type argument list as the doc writes a message's input: the tuple's elements, `—` for none. */
function argumentsText(node: ts.TypeNode | undefined): string {
  if (!node) return NONE;
  if (!ts.isTupleTypeNode(node)) return normalize(node.getText());
  return node.elements.length === 0 ? NONE : normalize(node.elements.map((element) => element.getText()).join(', '));
}

/**
 * A message definition's input and output as its declaration states them: `defineUpdate<Out, [In]>`,
 * `defineSignal<[In]>`, `defineQuery<Out, [In]>`, or a declared `…Definition<…>` type (the library's).
 */
function messageTypes(symbol: ts.Symbol, kind: MessageKind): { input: string; output: string } {
  const declaration = symbol.valueDeclaration;
  if (!declaration || !ts.isVariableDeclaration(declaration)) throw new Error(`${symbol.name} is not a variable`);
  const typeNode = declaration.type;
  const typeArguments =
    declaration.initializer && ts.isCallExpression(declaration.initializer)
      ? declaration.initializer.typeArguments
      : typeNode && (ts.isImportTypeNode(typeNode) || ts.isTypeReferenceNode(typeNode))
        ? typeNode.typeArguments
        : undefined;
  if (!typeArguments) throw new Error(`${symbol.name} declares no type arguments`);
  if (kind === 'signal') return { input: argumentsText(typeArguments[0]), output: NONE };
  return { input: argumentsText(typeArguments[1]), output: normalize(typeArguments[0].getText()) };
}

/** A function's (or method's) parameters and its result, `Promise<…>` unwrapped, as type text. */
function signatureTypes(type: ts.Type): { input: string; output: string } {
  const { checker } = types;
  const [signature] = checker.getSignaturesOfType(type, ts.SignatureKind.Call);
  const parameters = signature.parameters.map((parameter) => checker.typeToString(checker.getTypeOfSymbol(parameter)));
  const result = checker.typeToString(checker.getReturnTypeOfSignature(signature)).replace(/^Promise<(.*)>$/, '$1');
  return { input: parameters.length === 0 ? NONE : normalize(parameters.join(', ')), output: normalize(result) };
}

/**
 * The string values an expression of the sources can take: literals, the constants it names
 * (declared in the same file, else anywhere in `files`), their properties, both branches of a
 * condition. Anything else (a parameter, a computed value) yields nothing.
 */
function sourceStrings(files: string[]) {
  const sources = files.map((file) => types.program.getSourceFile(file)!);
  const unwrap = (node: ts.Expression): ts.Expression =>
    ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) ? unwrap(node.expression) : node;
  const variables = new Map<ts.SourceFile | 'anywhere', Map<string, ts.Expression[]>>();
  const remember = (scope: ts.SourceFile | 'anywhere', name: string, value: ts.Expression) => {
    const byName = variables.get(scope) ?? new Map<string, ts.Expression[]>();
    byName.set(name, [...(byName.get(name) ?? []), unwrap(value)]);
    variables.set(scope, byName);
  };
  const each = (visit: (node: ts.Node, source: ts.SourceFile) => void) => {
    for (const source of sources) {
      const walk = (node: ts.Node): void => {
        visit(node, source);
        ts.forEachChild(node, walk);
      };
      walk(source);
    }
  };
  each((node, source) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      remember(source, node.name.text, node.initializer);
      remember('anywhere', node.name.text, node.initializer);
    }
  });
  const valuesOf = (node: ts.Expression, source: ts.SourceFile, depth = 0): string[] => {
    const expression = unwrap(node);
    if (depth > 8) return [];
    if (ts.isStringLiteralLike(expression)) return [expression.text];
    if (ts.isConditionalExpression(expression)) return [...valuesOf(expression.whenTrue, source, depth + 1), ...valuesOf(expression.whenFalse, source, depth + 1)];
    if (ts.isIdentifier(expression)) {
      const found = variables.get(source)?.get(expression.text) ?? variables.get('anywhere')?.get(expression.text) ?? [];
      return found.flatMap((value) => valuesOf(value, source, depth + 1));
    }
    if (ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.expression)) {
      const objects = variables.get('anywhere')?.get(expression.expression.text) ?? [];
      return objects.flatMap((object) =>
        ts.isObjectLiteralExpression(object)
          ? object.properties
              .filter((property): property is ts.PropertyAssignment => ts.isPropertyAssignment(property) && property.name.getText() === expression.name.text)
              .flatMap((property) => valuesOf(property.initializer, source, depth + 1))
          : [],
      );
    }
    return [];
  };
  /** The values of an object literal's property `name` (`{ name: … }`, `{ name }`, or for `name` undefined, every computed key). */
  const propertyValues = (object: ts.Node | undefined, source: ts.SourceFile, name?: string): string[] => {
    if (!object || !ts.isObjectLiteralExpression(object)) return [];
    return object.properties.flatMap((property) => {
      if (name === undefined) return property.name && ts.isComputedPropertyName(property.name) ? valuesOf(property.name.expression, source) : property.name ? [property.name.getText().replace(/^['"]|['"]$/g, '')] : [];
      if (property.name?.getText() !== name) return [];
      if (ts.isShorthandPropertyAssignment(property)) return valuesOf(property.name, source);
      return ts.isPropertyAssignment(property) ? valuesOf(property.initializer, source) : [];
    });
  };
  return { each, valuesOf, propertyValues };
}

/** The `type` of every `ApplicationFailure` the sources throw, where it is a literal or a constant. */
function failureTypes(files: string[]): string[] {
  const { each, valuesOf, propertyValues } = sourceStrings(files);
  const found = new Set<string>();
  each((node, source) => {
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return;
    if (!/(^|\.)ApplicationFailure$/.test(node.expression.expression.getText())) return;
    const method = node.expression.name.text;
    const types =
      (method === 'nonRetryable' || method === 'retryable') && node.arguments.length >= 2 ? valuesOf(node.arguments[1], source)
      : method === 'create' ? propertyValues(node.arguments[0], source, 'type')
      : [];
    for (const type of types) found.add(type);
  });
  return [...found].sort();
}

/** The keys the sources upsert into a workflow's memo. */
function upsertedMemoKeys(files: string[]): string[] {
  const { each, propertyValues } = sourceStrings(files);
  const found = new Set<string>();
  each((node, source) => {
    if (ts.isCallExpression(node) && /(^|\.)upsertMemo$/.test(node.expression.getText())) for (const key of propertyValues(node.arguments[0], source)) found.add(key);
  });
  return [...found].sort();
}

/** The keys the sources set in a workflow's memo when they start it (`memo: { … }` in start options). */
function startMemoKeys(files: string[]): string[] {
  const { each, propertyValues } = sourceStrings(files);
  const found = new Set<string>();
  each((node, source) => {
    if (ts.isPropertyAssignment(node) && node.name.getText() === 'memo') for (const key of propertyValues(node.initializer, source)) found.add(key);
  });
  return [...found].sort();
}

// ---- the checks -----------------------------------------------------------------------------

describe('docs/contract.md', () => {
  it('lists exactly the workflow types the worker registers, with their input and result', () => {
    const functions = Object.entries(registeredWorkflows).filter(([, value]) => typeof value === 'function');
    const registered = functions.map(([, value]) => (value as { name: string }).name).sort();
    // turnpike/workflows exports the same functions, and definitions.ts names the same types.
    for (const [key, value] of functions) expect((workflowsEntry as Record<string, unknown>)[key], `turnpike/workflows exports ${key}`).toBe(value);
    expect(constantsNamed(/_WORKFLOW$/), 'the *_WORKFLOW type names').toEqual(registered);
    expect(listed('workflows')).toEqual(registered);
    const documented = rows('workflows').map((row) => ({ name: codeIn(row[0]), input: codeIn(row[1]), output: codeIn(row[2]) }));
    const inCode = functions.map(([key]) => ({ name: key, ...signatureTypes(types.checker.getTypeOfSymbol(codeSymbol(key, ts.SymbolFlags.Function))) }));
    expect(sortByName(documented)).toEqual(sortByName(inCode));
  });

  it("lists exactly the updates, signals and queries of turnpike's workflows, with their input and output", () => {
    const definitions = new Map([...messageDefinitions(exportedValues())].filter(([name]) => !isStreamMessage(name)));
    const documented = rows('messages').map((row) => ({ name: `${codeIn(row[1])} ${codeIn(row[0])}`, input: codeIn(row[2]), output: codeIn(row[3]) }));
    expect(documented.map(({ name }) => name).filter((name, index, all) => all.indexOf(name) !== index), 'listed twice').toEqual([]);
    const inCode = [...definitions].map(([name, identifier]) => {
      const kind = name.split(' ')[0] as MessageKind;
      return { name, ...messageTypes(codeSymbol(identifier, ts.SymbolFlags.Variable), kind) };
    });
    expect(sortByName(documented)).toEqual(sortByName(inCode));
  });

  it("lists exactly the handlers of a workflow's event stream", () => {
    const definitions = [...messageDefinitions(exportedValues())].filter(([name]) => isStreamMessage(name));
    expect(definitions).toHaveLength(3);
    const documented = rows('stream-messages').map((row) => ({ name: `${codeIn(row[1])} ${codeIn(row[0])}`, input: codeIn(row[2]), output: codeIn(row[3]) }));
    const inCode = definitions.map(([name, identifier]) => ({ name, ...messageTypes(codeSymbol(identifier, ts.SymbolFlags.Variable), name.split(' ')[0] as MessageKind) }));
    expect(sortByName(documented)).toEqual(sortByName(inCode));
  });

  it('lists exactly the search attributes, with the types they are registered with', () => {
    const searchAttributeTypes = new Set<unknown>(Object.values(SearchAttributeType));
    const keys = exportedValues()
      .map(([, value]) => value as { name?: unknown; type?: unknown })
      .filter((value) => typeof value === 'object' && value !== null && typeof value.name === 'string' && searchAttributeTypes.has(value.type));
    const names = [...new Set(keys.map((key) => key.name as string))].sort();
    const registered = workflowsEntry.SEARCH_ATTRIBUTE_TYPES as Record<string, string>;
    expect(Object.keys(registered).sort(), 'SEARCH_ATTRIBUTE_TYPES names every key').toEqual(names);
    expect(listed('search-attributes')).toEqual(names);
    for (const row of rows('search-attributes')) expect(codeIn(row[1]), `type of ${row[0]}`).toBe(registered[codeIn(row[0])]);
  });

  it('lists exactly the memo keys and stream topics', () => {
    const memoKeys = [...new Set([...upsertedMemoKeys(sourceFiles('workflows')), ...startMemoKeys(sourceFiles('client')), ...startMemoKeys(sourceFiles('workflows'))])].sort();
    const clientConstants = Object.entries(clientModule).filter(([key, value]) => /_MEMO_KEY$/.test(key) && typeof value === 'string').map(([, value]) => value as string);
    expect(memoKeys, 'the keys the workflows upsert and the client sets at start are *_MEMO_KEY constants').toEqual([...constantsNamed(/_MEMO_KEY$/), ...clientConstants].sort());
    expect(listed('memo-keys')).toEqual(memoKeys);
    expect(listed('stream-topics')).toEqual(constantsNamed(/_TOPIC$/));
  });

  it('lists exactly the rejection types, with who raises each and its HTTP status', () => {
    expect(listed('rejection-types')).toEqual(Object.keys(REJECTION_TYPES).sort());
    for (const row of rows('rejection-types')) {
      const info = REJECTION_TYPES[codeIn(row[0]) as keyof typeof REJECTION_TYPES];
      expect({ type: codeIn(row[0]), raisedBy: row[1], httpStatus: Number(row[2]) }).toEqual({ type: codeIn(row[0]), raisedBy: info.raisedBy.join(', '), httpStatus: info.httpStatus });
    }
  });

  it('lists exactly the failure types the workflows, activities, content reads and optional peers throw', () => {
    expect(listed('failure-types')).toEqual(failureTypes([...sourceFiles('workflows'), ...sourceFiles('activities'), ...sourceFiles('content'), ...sourceFiles('peers')]));
  });

  it('lists exactly the turn statuses, and which of them end a turn', () => {
    expect(listed('turn-statuses')).toEqual(Object.keys(TURN_STATUSES).sort());
    for (const row of rows('turn-statuses')) {
      expect(row[1], `whether ${row[0]} ends the turn`).toBe(TURN_STATUSES[codeIn(row[0]) as keyof typeof TURN_STATUSES].ended ? 'yes' : 'no');
    }
  });

  it('lists exactly the event types of a turn and of a conversation', () => {
    const eventTypes = (name: string) => {
      const union = types.checker.getDeclaredTypeOfSymbol(codeSymbol(name, ts.SymbolFlags.TypeAlias));
      return (union.isUnion() ? union.types : [union]).flatMap((member) => literals(types.checker.getTypeOfSymbol(member.getProperty('type')!)) ?? []).map((value) => JSON.parse(value) as string).sort();
    };
    expect(eventTypes('TurnEvent'), 'the union was read').toContain('turn-finished');
    expect(listed('turn-events')).toEqual(eventTypes('TurnEvent'));
    expect(listed('conversation-events')).toEqual(eventTypes('ConversationEvent'));
  });

  it('lists exactly the activities a worker registers, with their input and result', () => {
    const registered = Object.keys(createActivities({ tools: [] })).sort();
    expect(listed('activities')).toEqual(registered);
    const factory = types.checker.getTypeOfSymbol(codeSymbol('createActivities', ts.SymbolFlags.Function));
    const activities = types.checker.getReturnTypeOfSignature(types.checker.getSignaturesOfType(factory, ts.SignatureKind.Call)[0]);
    const inCode = registered.map((name) => ({ name, ...signatureTypes(types.checker.getTypeOfSymbol(activities.getProperty(name)!)) }));
    const documented = rows('activities').map((row) => ({ name: codeIn(row[0]), input: codeIn(row[1]), output: codeIn(row[2]) }));
    expect(sortByName(documented)).toEqual(sortByName(inCode));
  });

  it('lists exactly the model providers', () => {
    const providers = literals(types.checker.getDeclaredTypeOfSymbol(codeSymbol('ModelProvider', ts.SymbolFlags.TypeAlias)))!;
    expect(listed('providers')).toEqual(providers.map((value) => JSON.parse(value) as string).sort());
  });

  it("lists exactly the package's entry points", () => {
    const { name, exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };
    const entries = Object.keys(exports)
      .filter((entry) => !entry.endsWith('.json'))
      .map((entry) => (entry === '.' ? name : `${name}/${entry.replace(/^\.\//, '')}`));
    expect(listed('entry-points')).toEqual(entries.sort());
  });

  it("declares each shape as the code's exported type of the same name", () => {
    expect(types.documented.size, 'the doc declares its shapes in ts blocks').toBeGreaterThan(40);
    const documented: Record<string, string> = {};
    const inCode: Record<string, string> = {};
    for (const [name, symbol] of types.documented) {
      documented[name] = declaredShape(symbol);
      const found = (types.exported.get(name) ?? []).filter((candidate) => candidate.flags & ts.SymbolFlags.Type);
      inCode[name] = found.length === 1 ? declaredShape(found[0]) : `(the code exports ${found.length} types named ${name})`;
    }
    expect(documented).toEqual(inCode);
  });

  it('declares every type its tables name as an input, output or result', () => {
    const named = new Set<string>();
    const typeColumns: Record<string, number[]> = { workflows: [1, 2], activities: [1, 2], messages: [2, 3], 'stream-messages': [2, 3] };
    for (const [category, columns] of Object.entries(typeColumns)) {
      for (const row of rows(category)) for (const column of columns) for (const [identifier] of codeIn(row[column]).matchAll(/\b[A-Z]\w*/g)) named.add(identifier);
    }
    expect([...named].filter((name) => !types.documented.has(name)).sort()).toEqual([]);
  });

  it('links only to files inside the repository', () => {
    const links = [...DOC.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1].split('#')[0]).filter((target) => target !== '');
    expect(links.length).toBeGreaterThan(0);
    const outside = links.filter((target) => {
      if (/^[a-z]+:/i.test(target) || target.startsWith('/')) return true;
      const file = resolve(dirname(DOC_PATH), target);
      return relative(ROOT, file).startsWith('..') || relative(ROOT, file).split(sep)[0] === 'node_modules' || !existsSync(file);
    });
    expect(outside).toEqual([]);
    expect(DOC).not.toMatch(/shared\/design/);
  });

  it('holds for the code as it says: turns and conversations run no local activity', () => {
    const local = sourceFiles('workflows').filter((file) => /proxyLocalActivities|executeLocalActivity/.test(readFileSync(file, 'utf8')));
    expect(local.map((file) => relative(ROOT, file))).toEqual([]);
  });
});

function sortByName<T extends { name: string }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => a.name.localeCompare(b.name));
}
