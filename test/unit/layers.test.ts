/**
 * The import graph of the published code runs down only: each folder imports from its own floor
 * and the floors below, never from one above, and no file imports a file that imports it back.
 * The one exception is Temporal's own samples' pattern: workflow code imports the *type* of its
 * activities (`import type { TurnpikeActivities }`), which no bundle or process ever loads.
 *
 * Inside `workflows/` the same holds for its folders (docs/architecture.md): a folder imports its
 * own files and the folders below it, from the stories down to the types.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Floors, from the ground up: a file may import its own floor and those below. */
const FLOORS: Record<string, number> = { workflows: 1, activities: 2, codec: 2, connection: 2, content: 2, peers: 2, worker: 3, client: 4, 'index.ts': 4, api: 5, cli: 6, testing: 6 };

/**
 * The folders of `workflows/`, from the ground up: a file may import its own folder and those
 * before it. The root (`index.ts`, `preload.ts`, `registered-workflows.ts`) stands above them all.
 */
const WORKFLOW_FOLDERS = ['types', 'messages', 'stream', 'calls', 'context', 'budgets', 'agents', 'turn', 'conversation', 'capacity', 'evaluation', 'a2a'];
const WORKFLOW_ROOT_FILES = ['index.ts', 'preload.ts', 'registered-workflows.ts', 'legacy-query-guard.ts'];

function sources(folder: string): string[] {
  const full = path.join(ROOT, folder);
  if (statSync(full).isFile()) return [folder];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.join(folder, file));
}

function floorOf(file: string): string {
  return file.split(path.sep)[0]!;
}

/** A workflows file's floor inside `workflows/`: its folder's place, the root above every folder. */
function workflowFloorOf(file: string): number {
  const parts = file.split(path.sep);
  return parts.length === 2 ? WORKFLOW_FOLDERS.length : WORKFLOW_FOLDERS.indexOf(parts[1]!);
}

interface Import {
  target: string;
  typeOnly: boolean;
}

/** The repository files a file imports (relative specifiers only), and whether each import is type-only. */
function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const found: Import[] = [];
  for (const match of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+'(\.[^']+)'/gms)) {
    const resolved = path.normalize(path.join(path.dirname(file), match[3]!)).replace(/\.js$/, '.ts');
    found.push({ target: resolved, typeOnly: Boolean(match[2]) });
  }
  return found;
}

const files = Object.keys(FLOORS).flatMap(sources);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('the import graph of the published code', () => {
  it('has no arrow running up a floor (but workflow code\'s type-only import of its activities)', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const { target, typeOnly } of imports) {
        const from = FLOORS[floorOf(file)]!;
        const to = FLOORS[floorOf(target)];
        if (to === undefined || to <= from) continue;
        if (typeOnly && floorOf(file) === 'workflows' && target === path.join('activities', 'index.ts')) continue;
        upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no folder of workflows/ reaching up: each imports its own folder and those below it', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      if (floorOf(file) !== 'workflows') continue;
      for (const { target } of imports) {
        if (floorOf(target) !== 'workflows') continue;
        const [from, to] = [workflowFloorOf(file), workflowFloorOf(target)];
        const sameFolder = path.dirname(file) === path.dirname(target);
        if (to < from || sameFolder) continue;
        upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('places every workflows file in a listed folder, or at the root as an entry', () => {
    const unplaced = sources('workflows').filter((file) => {
      const parts = file.split(path.sep);
      return parts.length === 2 ? !WORKFLOW_ROOT_FILES.includes(parts[1]!) : parts.length !== 3 || !WORKFLOW_FOLDERS.includes(parts[1]!);
    });
    expect(unplaced).toEqual([]);
  });

  it('has no circle of imports', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const { target } of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('reads every published folder', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain(path.join('workflows', 'turn', 'agent-turn.ts'));
  });
});
