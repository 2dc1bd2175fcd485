#!/usr/bin/env python3
"""Exhaustive check of the current claim protocol (per-id KV claims), issue 32 item 3.

One task, two consumers (C0, C1) and one canceller. Every interleaving is searched
breadth-first with a visited set; at most one consumer crash, one lost PubAck (the write
landed, the writer does not know and writes again) and one ack-wait redelivery while the
holder lives. A broken invariant prints the shortest trace to it and exits 1.

Usage: kv_check.py [--broken NAME] [--mode amo|alo]   (docs/design-notes.md, "Model check")
"""
import sys

import explore

BROKEN = {
    "cancel_exists_wins": "a cancel whose create met an existing claim answers cancelled unread",
    "ack_before_record": "a consumer acks the task before its 'sent' outcome is on the claim",
    "rescue_live": "a rescue takes over a 'sending' claim without checking its owner is dead",
    "ttl_early": "the claims TTL can remove a claim while its task is still unacked",
    "claim_put": "the claim is a blind put instead of create-if-absent",
}


def cons_steps(s, i, broken, mode):
    kv, msg, cons, canc, sends, allowed, crashes, lost, spur, ttl = s
    alive, pc = cons[i]
    if not alive:
        return

    def put(c=None, **kw):
        d = dict(kv=kv, msg=msg, cons=cons, canc=canc, sends=sends, allowed=allowed,
                 crashes=crashes, lost=lost, spur=spur, ttl=ttl)
        if c is not None:
            cl = list(cons)
            cl[i] = c
            d["cons"] = tuple(cl)
        d.update(kw)
        return (d["kv"], d["msg"], d["cons"], d["canc"], d["sends"], d["allowed"],
                d["crashes"], d["lost"], d["spur"], d["ttl"])

    if crashes < 1:
        extra = 1 if pc in ("sent", "sent2") else 0  # crashed between send and outcome
        yield f"C{i} crashes in {pc}", put((False, pc), crashes=1, allowed=allowed + extra)
    if pc == "idle" and msg == "ready":
        yield f"C{i} is delivered the task", put((True, "got"), msg=("held", i))
    elif pc == "got":
        if kv is None or (broken == "claim_put" and kv[0] != "sending"):
            yield f"C{i} creates claim sending/C{i}", put((True, "claimed"), kv=("sending", i))
            if lost < 1:
                yield f"C{i} creates claim sending/C{i}, PubAck lost", \
                    put(kv=("sending", i), lost=1)
        elif kv == ("sending", i):
            yield f"C{i} reads its own claim", put((True, "claimed"))
        elif kv[0] == "sending":
            owner_dead = not cons[kv[1]][0]
            if owner_dead or broken == "rescue_live":
                if mode == "amo":
                    yield f"C{i} rescues C{kv[1]}'s claim: dead letter (unknown outcome)", \
                        put((True, "recorded"), kv=("dead", i))
                else:
                    yield f"C{i} rescues C{kv[1]}'s claim to send again", \
                        put((True, "claimed"), kv=("sending", i))
            else:
                yield f"C{i} sees C{kv[1]} alive sending: naks", \
                    put((True, "idle"), msg="ready" if msg == ("held", i) else msg)
        else:
            yield f"C{i} reads final claim {kv[0]}: acks", put((True, "recorded"))
    elif pc == "claimed":
        yield f"C{i} SENDS", put((True, "sent"), sends=sends + 1)
    elif pc == "sent" and broken == "ack_before_record":
        yield f"C{i} acks before recording", \
            put((True, "sent2"), msg="acked" if msg == ("held", i) else msg)
    elif pc in ("sent", "sent2"):
        nxt = "idle" if pc == "sent2" else "recorded"
        if kv == ("sending", i):
            yield f"C{i} records sent (revision checked)", put((True, nxt), kv=("sent", i))
            if lost < 1:
                yield f"C{i} records sent, PubAck lost", put(kv=("sent", i), lost=1)
        else:  # revision moved on (our own lost-PubAck write, or a rescue): keep what is there
            yield f"C{i} finds claim {kv}, stops", put((True, nxt))
    elif pc == "recorded":
        yield f"C{i} acks", put((True, "idle"), msg="acked" if msg == ("held", i) else msg)


def env_steps(s, broken):
    kv, msg, cons, canc, sends, allowed, crashes, lost, spur, ttl = s
    if msg != "ready" and msg != "acked":
        h = msg[1]
        if not cons[h][0]:
            yield f"ack wait: redelivered from dead C{h}", (kv, "ready", cons, canc, sends,
                                                            allowed, crashes, lost, spur, ttl)
        elif spur < 1:
            yield f"ack wait: redelivered from slow C{h}", (kv, "ready", cons, canc, sends,
                                                            allowed, crashes, lost, 1, ttl)
    # the TTL runs out after the task is acked and the cancel answered: a cancel later than
    # that meets sa_cancel_applies and the claim-memory refusal, which are not modelled
    # and no member is still at work on a copy (the TTL is days; a stale copy that old is
    # refused by sa_claim_memory_ms before any claim)
    done = msg == "acked" and canc not in ("start", "retry") and \
        all(c[1] == "idle" or not c[0] for c in cons)
    if kv is not None and not ttl and (done or broken == "ttl_early"):
        yield "claims TTL removes the claim", (None, msg, cons, canc, sends, allowed,
                                               crashes, lost, spur, kv)
    # the canceller
    nxt = None
    if canc == "start":
        if kv is None:
            yield "cancel creates claim cancelled", (("cancelled",), msg, cons, ("ans", "cancelled"),
                                                     sends, allowed, crashes, lost, spur, ttl)
            if lost < 1:
                yield "cancel creates claim cancelled, PubAck lost", \
                    (("cancelled",), msg, cons, "retry", sends, allowed, crashes, 1, spur, ttl)
        else:
            nxt = "retry"
    if canc == "retry" or nxt:
        if broken == "cancel_exists_wins":
            ans = "cancelled"
        else:
            ans = "cancelled" if kv == ("cancelled",) else "too late"
        yield f"cancel finds claim {kv}: answers {ans}", \
            (kv, msg, cons, ("ans", ans), sends, allowed, crashes, lost, spur, ttl)


def check(s, terminal, mode):
    kv, msg, cons, canc, sends, allowed, crashes, lost, spur, ttl = s
    if sends > 1 + (allowed if mode == "alo" else 0):
        return f"sent {sends} times ({mode}, {allowed} second send(s) allowed)"
    if canc == ("ans", "cancelled") and sends > 0:
        return "cancel answered cancelled but the task was sent"
    if not terminal:
        return None
    if msg != "acked":
        return f"terminal state with the task not acked ({msg}): lost"
    last = kv if kv is not None else ttl  # the claim, or what the TTL removed
    if canc == ("ans", "too late") and sends == 0 and (not last or last[0] != "dead"):
        return "cancel answered too late but the task was never sent"
    if last and last[0] == "sending":
        return "terminal state whose claim still says sending: status untruthful"
    if sends > 0 and (not last or last[0] not in ("sent", "dead")):
        return f"sent but the claim says {last}: status untruthful"
    if sends > 0 and last[0] == "dead" and not allowed:
        return "sent by a living member but the claim says dead: status untruthful"
    if sends == 0 and last and last[0] == "sent":
        return "claim says sent but nothing was sent"
    return None


def run(broken, mode):
    init = (None, "ready", ((True, "idle"), (True, "idle")), "start", 0, 0, 0, 0, 0, False)

    def steps(s):
        for i in (0, 1):
            yield from cons_steps(s, i, broken, mode)
        yield from env_steps(s, broken)

    return explore.search(init, steps, lambda s, terminal: check(s, terminal, mode))


if __name__ == "__main__":
    sys.exit(explore.main(sys.argv[1:], "kv model", BROKEN, run))
