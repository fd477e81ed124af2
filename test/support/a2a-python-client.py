"""
An A2A client in Python, on Google's a2a-sdk (PyPI), as another team's agent would be: it finds
a turnpike agent by its Agent Card, sends a message, and when the task stops at input-required
for an approval, answers it on the same task with a data part deciding the call, then reads the
task until it ends. Prints one JSON line: the states it saw, the approval id, the task id and the
answer's text.

    python a2a-python-client.py <agent base URL> <bearer token> <message text>
"""

import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, TaskState
from google.protobuf import json_format, struct_pb2

ENDED = {TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED}


def text_part(text):
    return Part(text=text, media_type="text/plain")


def data_part(value):
    data = struct_pb2.Value()
    json_format.ParseDict(value, data)
    return Part(data=data, media_type="application/json")


async def sent_task(client, message):
    """The task a blocking SendMessage answers with."""
    async for response in client.send_message(SendMessageRequest(message=message)):
        if response.HasField("task"):
            return response.task
    raise RuntimeError("SendMessage answered without a task")


def waiting_approval_id(task):
    """The approval id the task's input-required status message names in its data part."""
    for part in task.status.message.parts:
        if part.HasField("data"):
            waiting = json_format.MessageToDict(part.data)["waiting"]
            return waiting[0]["approvalId"]
    raise RuntimeError("the input-required status names no approval")


def answer_text(task):
    return "".join(part.text for artifact in task.artifacts for part in artifact.parts if part.HasField("text"))


async def main(base_url, token, text):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120)
    client = await create_client(base_url, client_config=ClientConfig(streaming=False, httpx_client=http))
    states = []
    try:
        task = await sent_task(client, Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[text_part(text)]))
        states.append(TaskState.Name(task.status.state))
        approval_id = None
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            approval_id = waiting_approval_id(task)
            decision = data_part({"approvalId": approval_id, "approved": True, "reason": "approved from Python"})
            task = await sent_task(client, Message(message_id=str(uuid.uuid4()), task_id=task.id, role=Role.ROLE_USER, parts=[decision]))
            states.append(TaskState.Name(task.status.state))
        for _ in range(600):
            if task.status.state in ENDED:
                break
            await asyncio.sleep(0.2)
            task = await client.get_task(GetTaskRequest(id=task.id))
        states.append(TaskState.Name(task.status.state))
        print(json.dumps({"taskId": task.id, "approvalId": approval_id, "states": states, "text": answer_text(task)}))
    finally:
        await client.close()
        await http.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
