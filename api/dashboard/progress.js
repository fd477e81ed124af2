// How far an approval has come, on its card: votes against the quorum, escalation steps (fired
// or due) and delegations, from the call's `progress` in the listing. Text nodes only.

function who(set) {
  return [...(set?.approvers ?? []), ...(set?.approverGroups ?? []).map((group) => `group ${group}`)].join(', ');
}

export function renderProgress(card, call) {
  let box = card.querySelector('.progress');
  if (!call.progress) {
    box?.remove();
    return;
  }
  if (!box) {
    box = document.createElement('ul');
    box.className = 'progress';
    card.querySelector('.meta').after(box);
  }
  const { quorum, votes, escalation = [], delegations = [], excludedRequester } = call.progress;
  const lines = [];
  const approvals = votes.filter((vote) => vote.approved).length;
  lines.push(['votes', `${approvals} of ${quorum} approvals${excludedRequester ? ` (not ${excludedRequester}, who asked)` : ''}`]);
  for (const vote of votes) lines.push(['vote', `${vote.approved ? '✔' : '✘'} ${vote.approver ?? 'someone'}${vote.reason ? `: ${vote.reason}` : ''}`]);
  for (const step of escalation) {
    const what = step.deny !== undefined ? `deny (“${step.deny}”)` : `escalate to ${who(step.to)}`;
    lines.push(['escalation', `${step.firedAt ? '⏫ escalated' : '⏳ then'}: ${what}${step.firedAt ? '' : ` at ${new Date(step.dueAt).toLocaleString()}`}`]);
  }
  for (const delegation of delegations) lines.push(['delegation', `➜ delegated by ${delegation.from} to ${who(delegation.to)}: ${delegation.reason}`]);
  box.replaceChildren(
    ...lines.map(([kind, text]) => {
      const item = document.createElement('li');
      item.className = kind;
      item.textContent = text;
      return item;
    }),
  );
}
