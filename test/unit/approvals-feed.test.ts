import { describe, expect, it } from 'vitest';
import { ApprovalsFeed } from '../../api/approvals-feed.js';
import { StreamTokens } from '../../api/stream-token.js';
import type { ParkedCall } from '../../client/turnpike-client.js';

function call(toolCallId: string): ParkedCall {
  return { kind: 'approval', toolCallId, toolName: 'x', input: {}, inputHash: 'h', requestedAt: '2026-11-23T12:00:00Z', expiresAt: '2026-11-24T12:00:00Z', turnWorkflowId: 't' };
}

/** A listing the test answers by hand; the interval is far longer than any test, so only nudges list. */
function manualListing() {
  const waiting: Array<{ resolve: (calls: ParkedCall[]) => void; reject: (error: Error) => void }> = [];
  const list = () => new Promise<ParkedCall[]>((resolve, reject) => waiting.push({ resolve, reject }));
  const settled = () => new Promise((resolve) => setImmediate(resolve));
  return { list, waiting, settled };
}

describe('ApprovalsFeed', () => {
  it('lists once for all subscribers, only while someone listens, and gives a late subscriber the latest listing at once', async () => {
    const listing = manualListing();
    const feed = new ApprovalsFeed(listing.list, 3_600_000);
    expect(listing.waiting).toHaveLength(0);
    const first: unknown[] = [];
    const second: unknown[] = [];
    const stopFirst = feed.subscribe((calls) => first.push(calls));
    const stopSecond = feed.subscribe((calls) => second.push(calls));
    expect(listing.waiting).toHaveLength(1);
    listing.waiting[0].resolve([call('a')]);
    await listing.settled();
    expect(first).toEqual([[call('a')]]);
    expect(second).toEqual([[call('a')]]);
    const late: unknown[] = [];
    const stopLate = feed.subscribe((calls) => late.push(calls));
    expect(late).toEqual([[call('a')]]);
    expect(listing.waiting).toHaveLength(1);
    expect(feed.listings).toBe(1);
    stopFirst();
    stopSecond();
    stopLate();
    feed.nudge();
    expect(listing.waiting).toHaveLength(1);
  });

  it('a nudge during a listing lists again once it ends, and a failed listing reaches subscribers as an error', async () => {
    const listing = manualListing();
    const feed = new ApprovalsFeed(listing.list, 3_600_000);
    const seen: unknown[] = [];
    const stop = feed.subscribe((calls) => seen.push(calls instanceof Error ? calls.message : calls));
    feed.nudge();
    feed.nudge();
    expect(listing.waiting).toHaveLength(1);
    listing.waiting[0].reject(new Error('visibility is down'));
    await listing.settled();
    expect(listing.waiting).toHaveLength(2);
    listing.waiting[1].resolve([call('b')]);
    await listing.settled();
    expect(seen).toEqual(['visibility is down', [call('b')]]);
    expect(listing.waiting).toHaveLength(2);
    stop();
  });
});

describe('stream tokens for the approvals listing', () => {
  it("carry the caller's groups and are good for that stream only", async () => {
    const tokens = new StreamTokens('x'.repeat(32));
    const { token } = await tokens.issue({ scope: 'approvals', target: 'approvals', identity: 'dana', groups: ['finance'] });
    await expect(tokens.verifyCaller(token, 'approvals', 'approvals')).resolves.toEqual({ identity: 'dana', groups: ['finance'] });
    await expect(tokens.verifyCaller(token, 'turn', 'approvals')).resolves.toBeUndefined();
    await expect(new StreamTokens('y'.repeat(32)).verifyCaller(token, 'approvals', 'approvals')).resolves.toBeUndefined();
    const turnToken = (await tokens.issue({ scope: 'turn', target: 't-1', identity: 'dana' })).token;
    await expect(tokens.verify(turnToken, 'turn', 't-1')).resolves.toBe('dana');
    await expect(tokens.verifyCaller(turnToken, 'approvals', 'approvals')).resolves.toBeUndefined();
  });
});
