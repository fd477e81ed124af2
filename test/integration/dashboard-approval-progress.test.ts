/**
 * The dashboard in Chromium shows how far an approval has come: the votes against its quorum,
 * its escalation steps (fired and due) and its delegate; a click casts the deciding vote.
 */
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../activities/tools.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, waitForState, type TurnpikeHarness } from '../support/turnpike-harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let runs = 0;
const refund = defineTool({
  name: 'refund_order',
  description: 'Refunds an order; two from finance, the managers once finance is slow.',
  inputSchema: z.object({ order: z.string(), amount: z.number() }),
  approval: { quorum: 2, approverGroups: ['finance'], excludeRequester: true, escalate: [{ after: '1s', to: { approvers: ['mgr'] } }, { after: '12h', deny: 'no decision' }] },
  async execute() {
    runs++;
    return { ok: true };
  },
});

let turnpike: TurnpikeHarness;
let idp: IdentityProvider;
let api: FastifyInstance;
let browser: Browser;
let client: TurnpikeClient;
let baseUrl: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_PATH`);
  [turnpike, idp] = await Promise.all([startTurnpike({ tools: [refund] }), startIdentityProvider()]);
  client = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({ client, oidc: { jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience } });
  await api.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await api?.close();
  await idp?.close();
  await turnpike?.stop();
});

describe('the dashboard', () => {
  it('shows the votes, the escalation steps and the delegate on the card, and a click casts the deciding vote', async () => {
    const handle = await turnpike.startTurn({ text: use('refund_order', { order: 'A-7', amount: 12_500 }), startedBy: 'rita' });
    const [pending] = await waitForPending(handle);
    const approvalId = pending.approvalId!;
    await client.approveToolCall(handle.workflowId, { approvalId, approved: true, approver: 'alice', approverGroups: ['finance'], reason: 'ticket matches' });
    await client.delegateApproval(handle.workflowId, { approvalId, approver: 'alice', approverGroups: ['finance'], to: { approvers: ['bob'] }, reason: 'bob knows the customer' });
    await waitForState(handle, (state) => state.pending[0]?.progress?.escalation?.[0]?.firedAt !== undefined && state.pending[0]?.progress?.delegations?.length === 1);

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${baseUrl}/`);
    await page.fill('#token', await idp.sign({ sub: 'u-dana', email: 'dana', groups: ['finance'] }, { expiresIn: '1h' }));
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#main:not([hidden])');
    const card = page.locator(`.card[data-key="${approvalId}"]`);
    // The listing comes from the memo, which follows the turn within moments.
    await card.locator('.progress .delegation').waitFor({ timeout: 20_000 });
    const lines = await card.locator('.progress li').allTextContents();
    expect(lines[0]).toBe('1 of 2 approvals (not rita, who asked)');
    expect(lines).toContain('✔ alice: ticket matches');
    expect(lines).toContain('⏫ escalated: escalate to mgr');
    expect(lines.some((line) => line.startsWith('⏳ then: deny (“no decision”) at '))).toBe(true);
    expect(lines).toContain('➜ delegated by alice to bob: bob knows the customer');
    if (process.env.UPDATE_SCREENSHOTS === '1') await card.screenshot({ path: 'docs/dashboard-approval-progress.png' });

    await card.locator('button.approve').click();
    await page.locator('.toast.ok', { hasText: 'Approved refund_order' }).waitFor();
    const result = await handle.result();
    expect(result.toolCalls).toMatchObject([{ outcome: 'approved', approval: { approver: 'dana' } }]);
    expect(runs).toBe(1);
    await page.close();
  });
});
