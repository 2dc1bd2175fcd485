#!/usr/bin/python3
"""Prints each message of a Maildir as one JSON line, parsed with Python's email package."""
import email
import email.policy
import json
import mailbox
import sys


def part_text(msg, kind):
    part = msg.get_body(preferencelist=(kind,))
    return part.get_content() if part is not None and part.get_content_type() == f"text/{kind}" else None


box = mailbox.Maildir(sys.argv[1], create=False)
for key in box.keys():
    msg = email.message_from_bytes(box.get_bytes(key), policy=email.policy.default)
    print(json.dumps({
        "subject": str(msg["Subject"]),
        "from": str(msg["From"]),
        "to": str(msg["To"] or ""),
        "cc": str(msg["Cc"] or ""),
        "has_bcc_header": msg["Bcc"] is not None,
        "date": str(msg["Date"] or ""),
        "message_id": str(msg["Message-ID"] or ""),
        "envelope_to": [a.strip() for a in str(msg["X-Envelope-To"]).split(",")],
        "content_type": msg.get_content_type(),
        "text": part_text(msg, "plain"),
        "html": part_text(msg, "html"),
    }, ensure_ascii=False))
