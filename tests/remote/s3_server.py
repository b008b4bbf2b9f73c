#!/usr/bin/env python3
"""An S3 API server on loopback for the remote tests: moto's S3 (and IAM/STS) in this process, with
SigV4 signature checking turned on once the test objects are in place.

    s3_server.py BUCKET KEY=FILE [KEY=FILE ...]

Prints one JSON line on stdout once it serves:
    {"port": N, "key": ..., "secret": ..., "session": {"key": ..., "secret": ..., "token": ...}}
then serves until stdin closes (the test ends) or it is killed. Every request after setup must be signed
with one of the printed credentials; an unsigned or wrongly signed request gets 403.

Commands on stdin, one a line, each answered "ok" (or "error ...") on stdout:
    put KEY FILE     replace (or add) an object: a new version with a new ETag

moto comes from PyPI (scripts/lib.sh fetch_test_oracles installs it into .test-deps/moto); it is a
test oracle only and never part of the product. Exits with status 3 when moto cannot be imported.
"""
import json
import os
import sys

try:
    import boto3
    from moto import settings
    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.server import ThreadedMotoServer
except Exception as e:  # noqa: BLE001
    print(f"moto unavailable: {e}", file=sys.stderr)
    sys.exit(3)

POLICY = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
})


def main() -> int:
    bucket = sys.argv[1]
    objects = [a.split("=", 1) for a in sys.argv[2:]]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    port = server.get_host_and_port()[1]
    endpoint = f"http://127.0.0.1:{port}"
    # Setup runs unauthenticated (moto's default), with throwaway credentials boto3 insists on.
    kw = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup",
              aws_secret_access_key="setup")
    iam = boto3.client("iam", **kw)
    iam.create_user(UserName="gdfs")
    iam.put_user_policy(UserName="gdfs", PolicyName="all", PolicyDocument=POLICY)
    key = iam.create_access_key(UserName="gdfs")["AccessKey"]
    iam.create_role(RoleName="reader", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}],
    }))
    iam.put_role_policy(RoleName="reader", PolicyName="all", PolicyDocument=POLICY)
    sts = boto3.client("sts", **kw)
    creds = sts.assume_role(RoleArn="arn:aws:iam::123456789012:role/reader",
                            RoleSessionName="gdfs")["Credentials"]
    s3 = boto3.client("s3", **kw)
    s3.create_bucket(Bucket=bucket)
    for name, path in objects:
        with open(path, "rb") as f:
            s3.put_object(Bucket=bucket, Key=name, Body=f.read())
    # From here on every request must carry a valid signature.
    settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    ActionAuthenticatorMixin.request_count = 0
    print(json.dumps({
        "port": port,
        "key": key["AccessKeyId"],
        "secret": key["SecretAccessKey"],
        "session": {"key": creds["AccessKeyId"], "secret": creds["SecretAccessKey"],
                    "token": creds["SessionToken"]},
    }), flush=True)
    signed = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
    for line in sys.stdin:
        words = line.split()
        try:
            if len(words) == 3 and words[0] == "put":
                with open(words[2], "rb") as f:
                    signed.put_object(Bucket=bucket, Key=words[1], Body=f.read())
                print("ok", flush=True)
            else:
                print("error: unknown command", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"error: {e}", flush=True)
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
