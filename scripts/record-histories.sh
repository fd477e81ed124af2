#!/usr/bin/env bash
# Records a new, named set of replay histories: `npm run record-histories -- 2026-12-01-my-change`.
# Sets are append-only from the 0.1.0 baseline on: see docs/versioning.md.
set -euo pipefail
name="${1:?usage: npm run record-histories -- <set-name>}"
target="test/replay/histories/$name"
if [ -e "$target" ]; then echo "$target exists; choose a new set name" >&2; exit 1; fi
RECORD_HISTORIES="$name" npx vitest run --project integration \
  test/integration/agent-turn.test.ts test/integration/smoke.test.ts test/integration/temporal-cli.test.ts \
  test/integration/conversation.test.ts test/integration/providers-turn.test.ts test/integration/plugin.test.ts \
  test/integration/oidc.test.ts test/integration/notifications.test.ts test/integration/responses-turn.test.ts \
  test/integration/provider-streaming-turn.test.ts test/integration/streaming.test.ts \
  test/integration/approvals-listing.test.ts \
  test/integration/transcript-reference.test.ts \
  test/integration/mcp.test.ts \
  test/integration/conversation-content.test.ts test/integration/many-readers.test.ts \
  test/integration/turn-hand-over.test.ts \
  test/integration/typed-output.test.ts test/integration/budgets.test.ts test/integration/agent-tools.test.ts \
  test/integration/handoffs.test.ts test/integration/agents-together.test.ts \
  test/integration/agent-tool-call-budgets.test.ts test/integration/mcp-unavailable.test.ts \
  test/integration/ai-sdk-turn.test.ts test/integration/openai-endpoints.test.ts \
  test/integration/openai-hosted-tools.test.ts test/integration/conversation-branches.test.ts test/integration/turn-fork.test.ts \
  test/integration/approval-quorum.test.ts test/integration/approval-escalation.test.ts \
  test/integration/slack-messages.test.ts test/integration/slack-interactions.test.ts test/integration/turn-fork-reference.test.ts \
  test/integration/history-limit.test.ts test/integration/tenants.test.ts \
  test/integration/tenant-budgets.test.ts test/integration/evaluations.test.ts test/integration/provider-headers.test.ts \
  test/integration/a2a-push.test.ts test/integration/evaluation-graders.test.ts test/integration/approvers-attribute.test.ts \
  test/integration/a2a-remote-tools.test.ts test/integration/a2a-remote-cancel.test.ts \
  test/integration/expiry-pages.test.ts
echo "recorded $(ls "$target" | wc -l) histories in $target"
