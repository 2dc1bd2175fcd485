#!/usr/bin/python3
"""A real SMTP server for the tests (aiosmtpd), writing what it accepts to a Maildir.

usage: smtp_sink.py MAILDIR PORTFILE
Each accepted message is stored with X-Envelope-From / X-Envelope-To lines in front, so a
test can tell envelope recipients (Bcc) from header recipients. A message whose subject
contains "[tempfail]" is refused once with 451, per Message-ID; every answer is logged to
MAILDIR/../smtp-attempts.log as "<code> <message-id>".
"""
import email
import email.policy
import mailbox
import os
import signal
import socket
import sys
import threading

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, maildir, log_path):
        self.box = mailbox.Maildir(maildir, create=True)
        self.log_path = log_path
        self.refused = set()
        self.lock = threading.Lock()

    def log(self, code, msgid):
        with self.lock, open(self.log_path, "a") as f:
            f.write(f"{code} {msgid}\n")

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        session.host_name = hostname
        self.log("EHLO", hostname)
        return responses

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        msgid = msg.get("Message-ID", "")
        if "[tempfail]" in str(msg.get("Subject", "")) and msgid not in self.refused:
            self.refused.add(msgid)
            self.log(451, msgid)
            return "451 4.3.0 try again later"
        head = (f"X-Envelope-From: {envelope.mail_from}\r\n"
                f"X-Envelope-To: {', '.join(envelope.rcpt_tos)}\r\n").encode()
        with self.lock:
            self.box.add(head + envelope.content)
        self.log(250, msgid)
        return "250 2.0.0 stored"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    maildir, port_file = sys.argv[1], sys.argv[2]
    sink = Sink(maildir, os.path.join(os.path.dirname(maildir.rstrip("/")), "smtp-attempts.log"))
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(port_file + ".tmp", port_file)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    stop.wait(3600)
    controller.stop()


if __name__ == "__main__":
    main()
