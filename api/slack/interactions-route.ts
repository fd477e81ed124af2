/**
 * `POST /api/slack/interactions`: the Request URL of a Slack app's interactivity. Slack posts a
 * form with one `payload` field (JSON) and signs the raw body (api/slack/signature.ts); an
 * unsigned, old, badly signed or replayed request is refused with 401 before anything is read.
 *
 * - Approve and Deny (`block_actions`) send the decision the way the decision route does
 *   (api/send-decision.ts): as the Slack user's turnpike identity (slack-users.ts), on the input
 *   hash the button carries. Slack is answered 200 at once; a refused decision (not allowed,
 *   already decided, turn ended, input changed, already voted) is told to the clicker alone, as
 *   an ephemeral message through the interaction's `response_url`, and changes nothing. A
 *   Slack user whose identity is bound to a tenant decides only that tenant's calls: another
 *   tenant's is refused as one they may not decide, as the decision route answers 404.
 * - Deny with reason opens a modal (`views.open`, with the interaction's `trigger_id`); its
 *   submission (`view_submission`) denies with the typed reason. A refusal is shown in the modal
 *   (`response_action: errors`) when the turn answers inside Slack's three seconds.
 *
 * The route lives in a fastify plugin of its own, so its form parser (which keeps the raw body
 * for the signature) reaches no other route.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply } from 'fastify';
import { TurnpikeNotFoundError, TurnpikeRejectedError } from '../../client/errors.js';
import { decodeApprovalRef, SLACK_ACTIONS, SLACK_DENY_REASON_VIEW, type SlackApprovalRef } from '../../activities/slack/approval-actions.js';
import type { Caller } from '../auth.js';
import { sendError } from '../replies.js';
import type { tenantBinder } from '../tenant-binding.js';
import type { RouteContext } from '../route-context.js';
import { sendDecision, type PersonsDecision } from '../send-decision.js';
import { SlackSignatureVerifier } from './signature.js';
import { refusalText, NOT_ALLOWED } from './refusal-texts.js';
import { SlackUsers, type SlackUserMapping } from './slack-users.js';
import { openSlack } from './slack-web-api.js';

/** Where Slack posts interactions: the Request URL of the app's interactivity. */
export const SLACK_INTERACTIONS_PATH = '/api/slack/interactions';

/** `buildApi({ slack })`: decisions from Slack's approval messages (docs/http-api.md, *Slack*). */
export interface SlackInteractionOptions {
  /** The app's Signing Secret (Basic Information; `SLACK_SIGNING_SECRET`). */
  signingSecret: string;
  /** The bot token (`xoxb-…`; `SLACK_BOT_TOKEN`): scopes `chat:write`, `users:read`, `users:read.email`. */
  botToken: string;
  /** Who each Slack user is in turnpike: by user id, or `{ byEmail }` (see {@link SlackUserMapping}). */
  users: SlackUserMapping;
  /** Slack's Web API, ending in `/api/` (default `https://slack.com/api/`). */
  apiUrl?: string;
}

/** How long a `view_submission` waits for the turn's answer before Slack is answered anyway. */
const SUBMISSION_WAIT_MS = 2_500;
/** A Slack interaction is a few kilobytes; nothing larger is read. */
const INTERACTION_BODY_LIMIT = 256 * 1024;

interface Interaction {
  type?: string;
  user?: { id?: string };
  trigger_id?: string;
  response_url?: string;
  actions?: Array<{ action_id?: string; value?: string }>;
  view?: { callback_id?: string; private_metadata?: string; state?: { values?: Record<string, Record<string, { value?: string | null }>> } };
}

/**
 * `bind` gives a Slack user's identity the tenant `ApiOptions.tenants` binds it to, as every
 * other caller of the API is given it (api/tenant-binding.ts).
 */
export async function registerSlackInteractions(app: FastifyInstance, routes: RouteContext, options: SlackInteractionOptions, bind: ReturnType<typeof tenantBinder>): Promise<void> {
  const verifier = new SlackSignatureVerifier(options.signingSecret);
  const slack = await openSlack(options.botToken, options.apiUrl);
  const mapped = new SlackUsers(options.users, async () => slack);
  const users = { caller: async (userId: string) => bind(await mapped.caller(userId)) };
  const working = new Set<Promise<void>>();
  const log = app.log;

  const decide = async (who: Caller, ref: SlackApprovalRef, decision: PersonsDecision): Promise<string | undefined> => {
    // As the decision route: someone who may not decide the call learns nothing of it.
    if (!(await routes.access.mayDecideApproval(who, ref.turnId, ref.approvalId))) return NOT_ALLOWED;
    try {
      await sendDecision(routes, who, ref.turnId, ref.approvalId, { ...decision, inputHash: ref.inputHash });
      return undefined;
    } catch (error) {
      if (error instanceof TurnpikeNotFoundError) return NOT_ALLOWED;
      if (error instanceof TurnpikeRejectedError) return refusalText(error.type, error.message);
      throw error;
    }
  };

  const onAction = async (interaction: Interaction): Promise<void> => {
    const action = interaction.actions?.[0];
    const kind = action?.action_id;
    if (kind !== SLACK_ACTIONS.approve && kind !== SLACK_ACTIONS.deny && kind !== SLACK_ACTIONS.denyWithReason) return;
    const tell = (text: string) => ephemeral(interaction.response_url, text, log);
    const ref = decodeApprovalRef(action!.value);
    if (!ref) return tell('turnpike cannot read this button.');
    const who = interaction.user?.id ? await users.caller(interaction.user.id) : undefined;
    if (!who) return tell(NOT_ALLOWED);
    if (kind === SLACK_ACTIONS.denyWithReason) {
      await slack.views.open({ trigger_id: interaction.trigger_id ?? '', view: denyReasonView(action!.value!) });
      return;
    }
    const refusal = await decide(who, ref, { approved: kind === SLACK_ACTIONS.approve });
    if (refusal) await tell(refusal);
  };

  const onSubmission = async (interaction: Interaction, reply: FastifyReply) => {
    const { blockId, actionId } = SLACK_DENY_REASON_VIEW;
    const errors = (text: string) => reply.status(200).send({ response_action: 'errors', errors: { [blockId]: text } });
    const ref = decodeApprovalRef(interaction.view?.private_metadata);
    if (!ref) return errors('turnpike cannot read this form.');
    const reason = interaction.view?.state?.values?.[blockId]?.[actionId]?.value?.trim();
    if (!reason) return errors('Say why the call is denied.');
    const who = interaction.user?.id ? await users.caller(interaction.user.id) : undefined;
    if (!who) return errors(NOT_ALLOWED);
    const decided = track(decide(who, ref, { approved: false, reason: reason.slice(0, 4_000) }));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), SUBMISSION_WAIT_MS)));
    const refusal = await Promise.race([decided, late]).finally(() => clearTimeout(timer));
    if (refusal === 'late') {
      // Slack closes the modal; the decision goes on, and a refusal can only be logged.
      // (A failure is logged by track.)
      void decided.then(
        (text) => text && log.warn({ turnId: ref.turnId, approvalId: ref.approvalId }, `a denial from Slack was refused after its modal closed: ${text}`),
        () => undefined,
      );
      return reply.status(200).send();
    }
    return refusal ? errors(refusal) : reply.status(200).send();
  };

  /** Work that goes on after Slack was answered; the server waits for it as it closes. */
  function track<T>(work: Promise<T>): Promise<T> {
    const done = work.then(
      () => undefined,
      (error: unknown) => log.error(error),
    );
    working.add(done);
    void done.finally(() => working.delete(done));
    return work;
  }

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: INTERACTION_BODY_LIMIT }, (_request, body, done) => done(null, body));
    scope.addHook('onClose', async () => {
      await Promise.all([...working]);
    });
    scope.post(SLACK_INTERACTIONS_PATH, async (request, reply) => {
      const rawBody = typeof request.body === 'string' ? request.body : '';
      const header = (name: string) => (typeof request.headers[name] === 'string' ? (request.headers[name] as string) : undefined);
      const verdict = verifier.verify({ signature: header('x-slack-signature'), timestamp: header('x-slack-request-timestamp') }, rawBody);
      if (verdict !== 'ok') return sendError(reply, 'Unauthorized', `Slack's request signature was refused: ${verdict}`);
      const interaction = parseInteraction(rawBody);
      if (!interaction) return sendError(reply, 'InvalidRequest', 'A Slack interaction is a form with a JSON `payload` field');
      if (interaction.type === 'view_submission' && interaction.view?.callback_id === SLACK_DENY_REASON_VIEW.callbackId) return onSubmission(interaction, reply);
      if (interaction.type === 'block_actions') {
        track(onAction(interaction).catch(async (error: unknown) => {
          await ephemeral(interaction.response_url, 'turnpike could not take this decision; try again, or decide in the dashboard.', log);
          throw error;
        }));
      }
      return reply.status(200).send();
    });
  });
}

function parseInteraction(rawBody: string): Interaction | undefined {
  try {
    const parsed = JSON.parse(new URLSearchParams(rawBody).get('payload') ?? '') as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Interaction) : undefined;
  } catch {
    return undefined;
  }
}

/** The modal that asks for a denial's reason; it carries the button's value to its submission. */
function denyReasonView(value: string) {
  return {
    type: 'modal' as const,
    callback_id: SLACK_DENY_REASON_VIEW.callbackId,
    private_metadata: value,
    title: { type: 'plain_text' as const, text: 'Deny with reason' },
    submit: { type: 'plain_text' as const, text: 'Deny' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      {
        type: 'input' as const,
        block_id: SLACK_DENY_REASON_VIEW.blockId,
        label: { type: 'plain_text' as const, text: 'Why is it denied? The agent is told.' },
        element: { type: 'plain_text_input' as const, action_id: SLACK_DENY_REASON_VIEW.actionId, multiline: true, max_length: 3_000 },
      },
    ],
  };
}

/** Tells the one person who clicked, through the interaction's `response_url` (Slack's, since the payload is signed). */
async function ephemeral(responseUrl: string | undefined, text: string, log: FastifyBaseLogger): Promise<void> {
  if (!responseUrl) return;
  try {
    const response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) log.warn(`Slack refused an ephemeral message (${response.status})`);
  } catch (error) {
    log.warn(error, 'Slack could not be told of a refused decision');
  }
}

