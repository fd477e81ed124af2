/**
 * Modules every workflow shares instead of evaluating its own copy: loaded once per reusable V8
 * context through the bundle's `preloadModules` (`TurnpikePlugin` adds this file), then frozen
 * by the SDK. With `reuseV8Context` a module that is not preloaded is evaluated again by every
 * workflow, and its module state is paid once per cached workflow and becomes garbage at each
 * eviction (`bench/workflow-instance-heap.ts` measures it).
 *
 * - zod and @noble/hashes: measured with 2,000 parked turns and a cache of 100, worker V8 heap
 *   live after GC 163 MB → 98 MB, RSS 671 MB → 394 MB (bench/results/experiments/heaps-*).
 * - turnpike's workflow modules themselves, and with them `@temporalio/workflow`'s public entry:
 *   a workflow instance then adds 13 KB before it runs
 *   instead of 112 KB (the floor's adds 30 KB; `test/unit/plugin.test.ts` checks that a new
 *   workflow evaluates none of turnpike's modules).
 *
 * What makes the workflow modules safe to share: their module scope holds only constants,
 * functions, classes, message definitions and lazily built zod schemas (pure, the same for every
 * workflow); every piece of a turn's state lives in objects its workflow function creates, and
 * the SDK functions they call find the running workflow when called, not when loaded. They must
 * not import `@opentelemetry/api` (see park-telemetry.ts). Keep it so: `replay.test.ts` replays
 * every recorded history through this preloaded bundle.
 *
 * A local module, because webpack drops a bare `require('zod')`: zod declares `sideEffects`.
 */
import { z } from 'zod';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import * as workflows from './index.js';
import * as registered from './registered-workflows.js';
import * as legacyQueryGuard from './legacy-query-guard.js';

// zod sets its default locale on the first schema it builds; build one now, before the SDK
// freezes shared modules, or every workflow fails with "Cannot add property localeError".
z.object({ warm: z.string().optional() }).safeParse({ warm: 'up' });

/** Referenced, so that webpack keeps the imports (these packages declare `sideEffects: false`). */
export const preloaded = [typeof sha256, typeof bytesToHex, typeof utf8ToBytes, typeof workflows, typeof registered, typeof legacyQueryGuard];
