#!/usr/bin/env python3
"""Verifies one webhook delivery (Python 3, standard library only).

    WEBHOOK_SECRET=<secret>[,<previous secret>] python3 verify.py "<x-svc-signature>" ["<x-svc-timestamp>"] < body

The body on stdin must be the raw bytes as received. Exit status 0: genuine and fresh; 1: rejected.
"""
import hashlib
import hmac
import os
import re
import sys
import time

TOLERANCE_MS = 5 * 60 * 1000


def reject(reason: str) -> None:
    print(f"rejected: {reason}", file=sys.stderr)
    sys.exit(1)


def main() -> None:
    secrets = [s for s in os.environ.get("WEBHOOK_SECRET", "").split(",") if s]
    if not secrets:
        reject("WEBHOOK_SECRET is not set")
    if len(sys.argv) not in (2, 3):
        reject('usage: verify.py "<x-svc-signature>" ["<x-svc-timestamp>"] < body')
    signature_header = sys.argv[1]
    timestamp_header = sys.argv[2] if len(sys.argv) == 3 else None

    # x-svc-signature: t=<milliseconds>,v1=<hex>[,v1=<hex>] (one v1 per live secret while a secret is rotated).
    t = None
    given = []
    for part in signature_header.split(","):
        key, _, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if key == "t":
            t = value
        elif key == "v1" and re.fullmatch(r"[0-9a-f]{64}", value):
            given.append(value)
    if t is None or not re.fullmatch(r"[0-9]+", t):
        reject("no t= timestamp in the signature header")
    if not given:
        reject("no v1= signature in the signature header")
    if timestamp_header is not None and timestamp_header != t:
        reject("x-svc-timestamp differs from t")
    if abs(time.time() * 1000 - int(t)) > TOLERANCE_MS:
        reject("timestamp is more than 5 minutes from now")

    body = sys.stdin.buffer.read()
    # HMAC-SHA256 over "<t>.<raw body>", keyed with the secret's text as given (not hex-decoded).
    for secret in secrets:
        expected = hmac.new(secret.encode(), t.encode() + b"." + body, hashlib.sha256).hexdigest()
        if any(hmac.compare_digest(expected, signature) for signature in given):
            print("ok")
            return
    reject("no v1 signature matches")


if __name__ == "__main__":
    main()
