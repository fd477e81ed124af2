"""The S3 server of the S3 content store's tests, started by scripts/s3-server.ts.

moto's S3 on 127.0.0.1:<port> (the one argument), checking every request's SigV4 signature as
AWS does: moto's IAM authentication, with one IAM user whose access key may do anything in S3.
Once it takes only requests signed with that key, it prints one JSON line on stdout,
{"accessKeyId": ..., "secretAccessKey": ...}, and serves until it is sent SIGTERM or SIGINT.
Objects live in the process's memory (moto spills bodies over 16 MB to temporary files).
"""
import json
import signal
import sys
import threading

import boto3
import requests
from moto.server import ThreadedMotoServer


def main() -> None:
    port = int(sys.argv[1])
    endpoint = f"http://127.0.0.1:{port}"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()

    # Until authentication is switched on below, moto takes any signature: these set-up calls
    # are signed with a key that does not exist.
    iam = boto3.client(
        "iam",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="set-up",
        aws_secret_access_key="set-up",
    )
    iam.create_user(UserName="turnpike")
    iam.put_user_policy(
        UserName="turnpike",
        PolicyName="s3",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        ),
    )
    key = iam.create_access_key(UserName="turnpike")["AccessKey"]

    # From now on (no unauthenticated requests left), a request whose signature is missing, made
    # with an unknown key or with the wrong secret is refused with 403.
    switched = requests.post(f"{endpoint}/moto-api/reset-auth", data=b"0", timeout=30)
    switched.raise_for_status()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(json.dumps({"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}), flush=True)
    while not stop.wait(1):
        pass
    server.stop()


if __name__ == "__main__":
    main()
