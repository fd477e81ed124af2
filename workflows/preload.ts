/**
 * Modules every workflow shares instead of instantiating its own copy: loaded once per reusable
 * V8 context through the bundle's `preloadModules` (worker/create-worker.ts), then frozen by the
 * SDK. Measured with 2,000 parked turns and a cache of 100: worker V8 heap live after GC 163 MB
 * → 98 MB, RSS 671 MB → 394 MB (bench/results/experiments/heaps-*).
 * A local module, because webpack drops a bare `require('zod')`: zod declares `sideEffects`.
 */
import { z } from 'zod';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

// zod sets its default locale on the first schema it builds; build one now, before the SDK
// freezes shared modules, or every workflow fails with "Cannot add property localeError".
z.object({ warm: z.string().optional() }).safeParse({ warm: 'up' });

/** Referenced, so that webpack keeps the imports (both packages declare `sideEffects: false`). */
export const preloaded = [typeof sha256, typeof bytesToHex, typeof utf8ToBytes];
