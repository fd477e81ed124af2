/**
 * The hash a decision binds to: SHA-256 over the input's canonical JSON (object keys
 * sorted), so the same input always hashes the same whatever order its keys arrived in.
 * Pure JS (@noble/hashes): the workflow sandbox has no `crypto` module.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

/** SHA-256 of a string's UTF-8 bytes, as hex: the one hash turnpike's workflows compute. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

export function inputHash(input: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(input))}`;
}
