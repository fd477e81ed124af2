/**
 * Who is calling the HTTP API. Decisions carry the approver identity from the request's
 * bearer token, never from the body, so a browser cannot decide in someone else's name.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** `TURNPIKE_API_TOKENS="token1:alice,token2:bob"` → token → approver identity. */
export function parseTokenMap(value: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const entry of (value ?? '').split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = entry.lastIndexOf(':');
    if (separator <= 0 || separator === entry.length - 1) {
      throw new Error(`TURNPIKE_API_TOKENS entries look like token:identity (got "${entry.slice(0, 4)}…")`);
    }
    tokens.set(entry.slice(0, separator), entry.slice(separator + 1));
  }
  return tokens;
}

/** The identity behind `Authorization: Bearer <token>`, or undefined. */
export function identify(tokens: Map<string, string>, authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const presented = Buffer.from(match[1]);
  for (const [token, identity] of tokens) {
    const known = Buffer.from(token);
    if (known.length === presented.length && timingSafeEqual(known, presented)) return identity;
  }
  return undefined;
}

/**
 * Signed decision tokens: when the server has a secret, it gives each approval it lists a token
 * that binds the turn, the approval, the exact input shown (its hash) and the approver it was
 * shown to; a decision must bring that token back. A browser can neither forge one for another
 * approval or input nor use one issued to someone else.
 */
export interface DecisionSubject {
  turnId: string;
  approvalId: string;
  inputHash: string;
  approver: string;
}

function canonical(subject: DecisionSubject): string {
  return [subject.turnId, subject.approvalId, subject.inputHash, subject.approver].map((part) => `${part.length}:${part}`).join('|');
}

export function signDecision(secret: string, subject: DecisionSubject): string {
  return createHmac('sha256', secret).update(canonical(subject)).digest('base64url');
}

export function verifyDecision(secret: string, subject: DecisionSubject, token: string): boolean {
  const expected = Buffer.from(signDecision(secret, subject));
  const presented = Buffer.from(token);
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}
