/**
 * The approval dashboard in a real headless Chromium (Debian's, driven by playwright-core)
 * against the HTTP API and a real dev server: a parked call appears, a click approves it and
 * the turn completes; a stale second tab's decision is rejected and the tool runs once; an MCP
 * server's question (server-everything over stdio) is answered from a form generated from its
 * requested schema; the listing arrives on the event stream, with no polling, and the page polls
 * when the stream fails.
 *
 * UPDATE_SCREENSHOTS=1 also writes docs/dashboard-queue.png.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTokenMap } from '../../api/auth.js';
import { buildApi } from '../../api/server.js';
import { TurnpikeClient } from '../../client/turnpike-client.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { executionsOf, testTools, use } from '../support/test-tools.js';
import { startTurnpike, waitForPending, type TurnpikeHarness } from '../support/turnpike-harness.js';

const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let turnpike: TurnpikeHarness;
let api: FastifyInstance;
let browser: Browser;
let baseUrl: string;
let idp: IdentityProvider;
let turnpikeClient: TurnpikeClient;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: apt-get install chromium (bash .ci/run does), or set CHROMIUM_PATH`);
  [turnpike, idp] = await Promise.all([
    // server-everything asks the elicitation test's question; the worker connects to it on first use.
    startTurnpike({ tools: testTools, mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }),
    startIdentityProvider(),
  ]);
  turnpikeClient = new TurnpikeClient({ client: turnpike.client, taskQueue: turnpike.taskQueue });
  api = await buildApi({
    client: turnpikeClient,
    tokens: parseTokenMap('alice-token:alice,bob-token:bob'),
    oidc: { jwksUrl: idp.jwksUrl, issuer: idp.issuer, audience: idp.audience },
    temporalUiUrl: 'http://127.0.0.1:8233',
  });
  await api.listen({ host: '127.0.0.1', port: 0 });
  baseUrl = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Without the background-networking flags Chromium keeps dialling hosts this machine cannot reach.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await idp?.close();
  await turnpike?.stop();
});

async function openDashboard(token: string, query = '', viewport = { width: 1100, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${baseUrl}/${query}`);
  await page.fill('#token', token);
  await page.click('#login-form button[type=submit]');
  await page.waitForSelector('#main:not([hidden])');
  return page;
}

function card(page: Page, key: string) {
  return page.locator(`.card[data-key="${key}"]`);
}

/** axe-core's violations of impact serious or critical on the page as it is now. */
async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: number; targets: string[] }>> {
  await page.addScriptTag({ content: AXE_SOURCE });
  // A string, so this file needs no DOM typings: it runs in the page.
  const violations: Array<{ id: string; impact: string; nodes: number; targets: string[] }> = await page.evaluate(
    `axe.run().then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => String(n.target)) })))`,
  );
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

describe('approval dashboard in Chromium', () => {
  it('serves every module of the page as JavaScript, and Chromium runs them: signed out, the page shows the sign-in form', async () => {
    const directory = new URL('../../api/dashboard/', import.meta.url);
    const modules = readdirSync(directory).filter((file) => file.endsWith('.js'));
    expect(modules).toContain('dashboard.js');
    for (const file of modules) {
      const response = await fetch(`${baseUrl}/${file}`);
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toBe('text/javascript; charset=utf-8');
      expect(await response.text(), file).toBe(readFileSync(new URL(file, directory), 'utf8'));
    }
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${baseUrl}/`);
    await page.waitForSelector('#login:not([hidden])');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows a parked call as it parks, approves it with a click, and the turn completes', async () => {
    const page = await openDashboard('alice-token');
    await expect(page.locator('#who').textContent()).resolves.toBe('signed in as alice');

    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'browser', count: 3 }) });
    const [pending] = await waitForPending(handle);
    const entry = card(page, pending.approvalId!);
    await entry.waitFor({ timeout: 15_000 });
    await expect(entry.locator('.tool').textContent()).resolves.toBe('guarded_action');
    await expect(entry.locator('.input').textContent()).resolves.toContain('"target": "browser"');
    await expect(entry.locator('.left').textContent()).resolves.toMatch(/2[34]h \d+m left/);

    await entry.locator('.reason').fill('checked in the browser');
    await entry.locator('button.approve').click();
    await page.locator('.toast.ok', { hasText: 'Approved guarded_action' }).waitFor();
    const result = await handle.result();
    expect(result.toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approver: 'alice', reason: 'checked in the browser' } });
    await entry.waitFor({ state: 'detached' });
    await page.close();
  });

  it('shows a budget approval with what the turn spent, and extends the budget by an edited amount', async () => {
    const handle = await turnpike.startTurn({ text: 'look up order 1001 then look up order 1002', budget: { totalTokens: 30 } });
    const [pending] = await waitForPending(handle);
    expect(pending.kind).toBe('budget');
    const page = await openDashboard('alice-token');
    const entry = card(page, pending.approvalId!);
    await entry.waitFor({ timeout: 15_000 });
    await expect(entry.locator('.kind').textContent()).resolves.toBe('budget');
    await expect(entry.locator('.input').textContent()).resolves.toContain('"exceeded"');
    await expect(entry.locator('.input').textContent()).resolves.toContain('"spent"');
    await expect(entry.locator('button.approve').textContent()).resolves.toBe('Extend');
    await entry.locator('details.edit summary').click();
    await entry.locator('.edit-fields [data-field="extendBy"]').fill('{"totalTokens": 100000}');
    await entry.locator('button.approve').click();
    await page.locator('.toast.ok', { hasText: 'Approved turnpike_budget (edited)' }).waitFor();
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', budget: { totalTokens: 100_030 } });
    expect(result.decisions).toEqual([expect.objectContaining({ toolName: 'turnpike_budget', outcome: 'approved', approver: 'alice' })]);
    await page.close();
  });

  // bob could decide the call while it was parked; once alice decided and the turn ended, he may
  // not read the turn, so the API answers 404 (as for any turn he may not read) and the page says so.
  it('rejects the second decision from a stale tab, and the tool runs once', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'two-tabs', count: 1 }) });
    const [pending] = await waitForPending(handle);
    // The stale tab never refreshes after its first load (interval=0).
    const stale = await openDashboard('bob-token', '?interval=0');
    const fresh = await openDashboard('alice-token');
    await card(stale, pending.approvalId!).waitFor();
    await card(fresh, pending.approvalId!).waitFor();

    await card(fresh, pending.approvalId!).locator('button.approve').click();
    await fresh.locator('.toast.ok').waitFor();
    await handle.result();

    await card(stale, pending.approvalId!).locator('button.approve').click();
    const rejection = stale.locator('.toast.error');
    await rejection.waitFor();
    await expect(rejection.textContent()).resolves.toMatch(/Not approved: this approval is no longer open to you/);
    expect(executionsOf(handle.workflowId)).toHaveLength(1);
    expect((await handle.result()).toolCalls[0].approval?.approver).toBe('alice');
    await stale.close();
    await fresh.close();
  });

  it('shows a turn by its URL to one who may read it, and to anyone else only that no such turn was found', async () => {
    // Started by alice; finance_transfer is decided by the controller or the finance group, so bob may not read it.
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('finance_transfer', { account: 'acc-private', amount: 77 }) });
    await waitForPending(handle);
    const query = `?turn=${encodeURIComponent(handle.workflowId)}`;
    const mine = await openDashboard('alice-token', query);
    await mine.locator('#turn-facts:not([hidden])').waitFor();
    await expect(mine.locator('#turn-status').textContent()).resolves.toBe('awaiting-input');
    await expect(mine.locator('#turn-pending').textContent()).resolves.toContain('acc-private');
    const theirs = await openDashboard('bob-token', query);
    await theirs.locator('#turn-missing:not([hidden])').waitFor();
    await expect(theirs.locator('#turn-missing').textContent()).resolves.toBe('No such turn was found.');
    expect(await theirs.locator('#turn-facts').isHidden()).toBe(true);
    expect(await theirs.content()).not.toContain('acc-private');
    await mine.close();
    await theirs.close();
    await handle.cancel();
  });

  it('lists approvals and client-tool calls across turns, each with its turn and tenant', async () => {
    const turns = [
      await turnpikeClient.startTurn({ model: { provider: 'scripted', model: 'demo' }, messages: [{ role: 'user', content: use('guarded_action', { target: 'db-primary', count: 2 }) }] }, { turnId: `dashboard-tenant-${randomUUID()}`, tenant: 'acme' }),
      await turnpike.startTurn({ text: 'refund $420 on order 1001' }),
      await turnpike.startTurn({ startedBy: 'alice', text: use('pick_colour', { options: ['red', 'green', 'blue'] }) }),
    ];
    for (const handle of turns) await waitForPending(handle);
    const page = await openDashboard('alice-token');
    await page.locator('#approvals .card').nth(1).waitFor();
    await page.locator('#client-calls .card').first().waitFor();
    await expect(page.locator('#approval-count').textContent()).resolves.toBe('2');
    await expect(page.locator('#approvals .card[data-tool="issue_refund"] .policy-reason').textContent()).resolves.toContain('refunds above $100 need a person');
    // The turn started for a tenant says so; the others have no tenant to show.
    await expect(page.locator('#approvals .card[data-tool="guarded_action"] .meta').textContent()).resolves.toContain('tenant acme');
    await expect(page.locator('#approvals .card[data-tool="issue_refund"] .meta').textContent()).resolves.not.toContain('tenant');
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync('docs', { recursive: true });
      await page.screenshot({ path: 'docs/dashboard-queue.png', fullPage: true });
    }
    await page.close();
    for (const handle of turns) await handle.cancel();
  });

  it('an approver signed in with a JWT sees only their tools\' calls, reads the context, edits an amount and approves it', async () => {
    const theirs = await turnpike.startTurn({ text: `look up order 1001 then ${use('finance_transfer', { account: 'refunds', amount: 1200 })}` });
    const others = await turnpike.startTurn({ text: use('guarded_action', { target: 'not-for-dana', count: 1 }) });
    const [pending] = await waitForPending(theirs);
    const [othersPending] = await waitForPending(others);
    const page = await openDashboard(await idp.sign({ sub: 'u-dana', email: 'dana', groups: ['finance'] }, { expiresIn: '1h' }));
    await expect(page.locator('#who').textContent()).resolves.toBe('signed in as dana');
    const entry = card(page, pending.approvalId!);
    await entry.waitFor({ timeout: 15_000 });
    expect(await card(page, othersPending.approvalId!).count()).toBe(0);

    await entry.locator('details.context summary').click();
    const context = entry.locator('.context-body');
    await context.getByText('The user asked').waitFor();
    await expect(context.textContent()).resolves.toContain('look up order 1001');
    await expect(context.textContent()).resolves.toContain('Earlier: lookup_order (executed)');

    await entry.locator('details.edit summary').click();
    const amount = entry.locator('.edit-fields [data-field="amount"]');
    await expect(amount.inputValue()).resolves.toBe('1200');
    await amount.fill('950');
    await expect(entry.locator('.edit-diff').textContent()).resolves.toBe('amount: 1200 → 950');
    expect(await seriousViolations(page)).toEqual([]);
    if (process.env.UPDATE_SCREENSHOTS === '1') await entry.screenshot({ path: 'docs/dashboard-context.png' });
    await entry.locator('button.approve').click();
    await page.locator('.toast.ok', { hasText: 'Approved finance_transfer (edited)' }).waitFor();

    const result = await theirs.result();
    expect(result.toolCalls.at(-1)).toMatchObject({ toolName: 'finance_transfer', outcome: 'approved', input: { account: 'refunds', amount: 950 }, approval: { approver: 'dana' } });
    expect(executionsOf(theirs.workflowId)).toMatchObject([{ toolName: 'finance_transfer', input: { account: 'refunds', amount: 950 } }]);
    // The decision is in the audit trail under the approver's identity.
    const row = page.locator(`#decisions tr[data-approval-id="${pending.approvalId}"]`);
    await row.waitFor({ timeout: 15_000 });
    await expect(row.locator('td').allTextContents()).resolves.toEqual([
      expect.any(String),
      'finance_transfer',
      'approved',
      'dana',
      ' (input edited)',
      theirs.workflowId,
    ]);
    await page.close();
    await others.cancel();
  });

  it('decides from the keyboard: j moves to the next call, a approves it', async () => {
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'keyboard', count: 4 }) });
    const [pending] = await waitForPending(handle);
    const page = await openDashboard('bob-token');
    await card(page, pending.approvalId!).waitFor();
    await page.keyboard.press('?');
    await page.locator('#shortcuts:not([hidden])').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#shortcuts').waitFor({ state: 'hidden' });
    // The newest call is last; move down until it has the focus.
    const cards = page.locator('#approvals .card');
    const keys = await cards.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-key')));
    const position = keys.indexOf(pending.approvalId!);
    for (let step = 0; step <= position; step++) await page.keyboard.press('j');
    await expect(page.evaluate('document.activeElement?.dataset.key')).resolves.toBe(pending.approvalId);
    await page.keyboard.press('a');
    await page.locator('.toast.ok', { hasText: 'Approved guarded_action' }).waitFor();
    expect((await handle.result()).toolCalls[0]).toMatchObject({ outcome: 'approved', approval: { approver: 'bob' } });
    await page.close();
  });

  it('has no serious accessibility violations (axe-core), signed out or with calls listed', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${baseUrl}/`);
    await page.locator('#login:not([hidden])').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();

    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'a11y', count: 1 }) });
    const [pending] = await waitForPending(handle);
    const listed = await openDashboard('alice-token');
    await card(listed, pending.approvalId!).waitFor();
    expect(await seriousViolations(listed)).toEqual([]);
    await listed.close();
    await handle.cancel();
  });

  it('fits a phone-sized viewport: nothing scrolls sideways and the decision buttons are on screen', async () => {
    const handle = await turnpike.startTurn({ text: 'refund $480 on order 1001' });
    const [pending] = await waitForPending(handle);
    const page = await openDashboard('alice-token', '', { width: 390, height: 844 });
    const entry = card(page, pending.approvalId!);
    await entry.waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    for (const button of ['button.approve', 'button.deny']) {
      const box = await entry.locator(button).boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    if (process.env.UPDATE_SCREENSHOTS === '1') await page.screenshot({ path: 'docs/dashboard-phone.png', fullPage: true });
    await page.close();
    await handle.cancel();
  });

  it("answers an MCP server's question from a form built from its requested schema: an invalid value is refused with a message, a valid answer completes the call", async () => {
    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('everything__trigger-elicitation-request', {}) });
    const [pending] = await waitForPending(handle);
    expect(pending.kind).toBe('elicitation');
    const page = await openDashboard('alice-token');
    const question = card(page, pending.elicitationId!);
    await question.waitFor({ timeout: 15_000 });
    await expect(question.locator('.message').textContent()).resolves.toBe('Please provide inputs for the following fields:');
    await expect(question.getAttribute('aria-label')).resolves.toBe(`Question: everything__trigger-elicitation-request, turn ${handle.workflowId}`);
    // Typed by the requested schema, with its defaults.
    const field = (name: string) => question.locator(`.edit-fields [data-field="${name}"]`);
    await expect(field('email').getAttribute('type')).resolves.toBe('email');
    await expect(field('homepage').getAttribute('type')).resolves.toBe('url');
    await expect(field('birthdate').getAttribute('type')).resolves.toBe('date');
    await expect(field('check').getAttribute('type')).resolves.toBe('checkbox');
    await expect(field('integer').inputValue()).resolves.toBe('42');
    await expect(field('untitledSingleSelectEnum').inputValue()).resolves.toBe('"Monica"');
    await expect(field('titledSingleSelectEnum').locator('option:checked').textContent()).resolves.toBe('Superman');
    await expect(field('name').getAttribute('required')).resolves.toBe('');
    expect(await seriousViolations(page)).toEqual([]);
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      // Tall enough for the whole card, so that the sticky header does not cover it.
      await page.setViewportSize({ width: 1100, height: 1700 });
      await question.screenshot({ path: 'docs/dashboard-question.png' });
      await page.setViewportSize({ width: 1100, height: 900 });
    }

    const answers: string[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().includes('/tool-results/')) answers.push(request.postData() ?? '');
    });
    // The browser refuses what it can check, and nothing is sent.
    await field('name').fill('Ada Lovelace');
    await field('email').fill('not an email');
    await question.locator('button.accept').click();
    await expect(question.locator('.answer-problems').textContent()).resolves.toMatch(/^email: .+/);
    await field('email').fill('ada@example.com');
    await field('integer').fill('500');
    await question.locator('button.accept').click();
    await expect(question.locator('.answer-problems').textContent()).resolves.toMatch(/^integer: .+/);
    expect(answers).toEqual([]);

    // What the browser does not check the turn refuses, and the page shows the turn's message:
    // here a browser without email checking (the field made plain text) sends a bad address.
    await field('integer').fill('7');
    await field('email').evaluate((input) => input.setAttribute('type', 'text'));
    await field('email').fill('ada-at-example');
    await question.locator('button.accept').click();
    await question.locator('.answer-problems', { hasText: 'does not fit the requested schema' }).waitFor();
    await expect(question.locator('.answer-problems').textContent()).resolves.toContain('email');
    expect(answers).toHaveLength(1);
    expect((await waitForPending(handle))[0].elicitationId).toBe(pending.elicitationId);

    await field('email').fill('ada@example.com');
    await field('check').check();
    await question.locator('button.accept').click();
    await page.locator('.toast.ok', { hasText: 'Answered everything__trigger-elicitation-request' }).waitFor();
    expect(JSON.parse(answers[1])).toEqual({
      output: {
        action: 'accept',
        content: {
          name: 'Ada Lovelace',
          check: true,
          firstLine: 'It was a dark and stormy night.',
          email: 'ada@example.com',
          integer: 7,
          number: 3.14,
          untitledSingleSelectEnum: 'Monica',
          untitledMultipleSelectEnum: ['Guitar'],
          titledSingleSelectEnum: 'hero-1',
          titledMultipleSelectEnum: ['fish-1'],
          legacyTitledEnum: 'pet-1',
        },
      },
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.toolCalls.map((call) => call.outcome)).toEqual(['executed']);
    const output = JSON.stringify(result.toolCalls[0].output);
    expect(output).toContain('Name: Ada Lovelace');
    expect(output).toContain('Email: ada@example.com');
    expect(output).toContain('Favorite Integer: 7');
    await question.waitFor({ state: 'detached' });
    await page.close();
  });

  it('declines an MCP server question with a click on a phone-sized screen, and the server is told', async () => {
    const handle = await turnpike.startTurn({ startedBy: 'bob', text: use('everything__trigger-elicitation-request', {}) });
    const [pending] = await waitForPending(handle);
    const page = await openDashboard('bob-token', '', { width: 390, height: 844 });
    const question = card(page, pending.elicitationId!);
    await question.waitFor({ timeout: 15_000 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    for (const button of ['button.accept', 'button.decline', 'button.cancel']) {
      const box = await question.locator(button).boundingBox();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
    await question.locator('button.decline').click();
    await page.locator('.toast.ok', { hasText: 'Declined everything__trigger-elicitation-request' }).waitFor();
    expect(JSON.stringify((await handle.result()).toolCalls[0].output)).toContain('User declined');
    await page.close();
  });

  it('updates from the event stream: a call parked later appears and one decided elsewhere disappears, with no polling request and no reload', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const listings: string[] = [];
    const streams: string[] = [];
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (pathname === '/api/approvals') listings.push(request.url());
      if (pathname === '/api/approvals/events') streams.push(request.url());
    });
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await page.goto(`${baseUrl}/`);
    await page.fill('#token', 'alice-token');
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#main:not([hidden])');
    await page.locator('#status.live').waitFor();

    const handle = await turnpike.startTurn({ startedBy: 'alice', text: use('guarded_action', { target: 'streamed', count: 5 }) });
    const [pending] = await waitForPending(handle);
    const entry = card(page, pending.approvalId!);
    await entry.waitFor({ timeout: 20_000 });
    // Decided outside this page and outside the API: the feed's next listing drops it.
    await turnpikeClient.approveToolCall(handle.workflowId, { approvalId: pending.approvalId!, approved: true, approver: 'bob' });
    await entry.waitFor({ state: 'detached', timeout: 20_000 });
    await page.locator(`#decisions tr[data-approval-id="${pending.approvalId}"]`).waitFor({ timeout: 20_000 });

    expect(listings).toEqual([]);
    expect(streams).toHaveLength(1);
    expect(streams[0]).toMatch(/\/api\/approvals\/events\?token=/);
    expect(navigations).toHaveLength(1);
    await page.close();
  });

  it('falls back to polling when the event stream cannot be opened', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.route('**/api/approvals/events**', (route) => route.fulfill({ status: 503, body: 'unavailable' }));
    const listings: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/approvals') listings.push(request.url());
    });
    await page.goto(`${baseUrl}/`);
    await page.fill('#token', 'alice-token');
    await page.click('#login-form button[type=submit]');
    await page.waitForSelector('#main:not([hidden])');
    const handle = await turnpike.startTurn({ text: use('guarded_action', { target: 'polled', count: 6 }) });
    const [pending] = await waitForPending(handle);
    await card(page, pending.approvalId!).waitFor({ timeout: 20_000 });
    expect(listings.length).toBeGreaterThan(0);
    await page.close();
    await handle.cancel();
  });
});
