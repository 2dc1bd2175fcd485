#!/usr/bin/env python3
"""Exhaustive check of the proposed ledger-stream protocol (issue 32 item 2), issue 32 item 3.

Per shard one ordered ledger stream; its entries here: ("C", i) a claim block of consumer i
naming the task, ("X",) a cancel, ("O", i, result) an outcome block named by i's claim block.
The first of a claim block and a cancel in the ledger wins. A consumer sends once its watcher
has passed its block's sequence with no cancel and no earlier live claim before it; a cancel,
after its PubAck, reads the ledger before its own entry and answers cancelled or too late.
A lost PubAck appends the entry and the writer appends it again (no Msg-Id dedupe assumed,
the harder case). Same bounds as kv_check.py: two consumers, one canceller, one crash, one
lost PubAck, one ack-wait redelivery from a living holder.

Usage: ledger_check.py [--broken NAME] [--mode amo|alo]   (docs/design-notes.md, "Model check")
"""
import sys

import explore

BROKEN = {
    "send_before_watch": "a consumer sends as soon as its block's PubAck is in, unwatched",
    "cancel_no_read": "a cancel answers cancelled after its PubAck without reading the ledger",
    "ack_before_outcome": "a consumer acks the task before its outcome block is in the ledger",
    "rescue_live": "a later block takes over an earlier block without checking its owner died",
}


def first_claim(ledger, upto):
    """What decides among ledger[:upto]: ("X",), ("C", i) or None."""
    for e in ledger[:upto]:
        if e[0] in ("C", "X"):
            return e
    return None


def outcome_of(ledger, owner):
    outs = [e for e in ledger if e[0] == "O" and e[1] == owner]
    return outs[-1][2] if outs else None


def cons_steps(s, i, broken, mode):
    ledger, msg, cons, canc, sends, allowed, crashes, lost, spur = s
    alive, pc = cons[i]
    if not alive:
        return

    def nxt(pc2, **kw):
        d = dict(ledger=ledger, msg=msg, canc=canc, sends=sends, allowed=allowed,
                 crashes=crashes, lost=lost, spur=spur)
        d.update(kw)
        cl = list(cons)
        cl[i] = (True, pc2)
        return (d["ledger"], d["msg"], tuple(cl), d["canc"], d["sends"], d["allowed"],
                d["crashes"], d["lost"], d["spur"])

    if crashes < 1:
        extra = 1 if pc in ("sent", "sent2") else 0  # crashed between send and outcome
        cl = list(cons)
        cl[i] = (False, pc)
        yield f"C{i} crashes in {pc}", (ledger, msg, tuple(cl), canc, sends, allowed + extra,
                                        1, lost, spur)
    mine = ("C", i)
    if pc == "idle" and msg == "ready":
        yield f"C{i} is delivered the task", nxt("got", msg=("held", i))
    elif pc == "got":
        yield f"C{i} appends its claim block", nxt("watch", ledger=ledger + (mine,))
        if lost < 1:
            yield f"C{i} appends its claim block, PubAck lost: appends again", \
                nxt("watch", ledger=ledger + (mine, mine), lost=1)
    elif pc == "watch":
        upto = ledger.index(mine) + 1  # the watcher passes our first block's sequence
        win = first_claim(ledger, upto)
        if broken == "send_before_watch":
            yield f"C{i} sends without waiting for its watcher", nxt("claimed")
        elif win == ("X",):
            yield f"C{i} watcher: cancel before its block: acks unsent", nxt("ack")
        elif win == mine and outcome_of(ledger, i):
            # a copy redelivered to the member whose own earlier block won and has an outcome
            yield f"C{i} watcher: its own earlier block has outcome {outcome_of(ledger, i)}: acks", \
                nxt("ack")
        elif win == mine:
            yield f"C{i} watcher passed its block, no cancel before it", nxt("claimed")
        else:
            owner = win[1]
            done = outcome_of(ledger, owner)
            if done:
                yield f"C{i} watcher: C{owner}'s block won, outcome {done}: acks", nxt("ack")
            elif cons[owner][0] and broken != "rescue_live":
                yield f"C{i} watcher: C{owner}'s block won, C{owner} alive: naks", \
                    nxt("idle", msg="ready" if msg == ("held", i) else msg)
            elif mode == "amo":
                yield f"C{i} rescues C{owner}'s block: outcome dead (unknown)", \
                    nxt("ack", ledger=ledger + (("O", owner, "dead"),))
            else:
                yield f"C{i} rescues C{owner}'s block to send again", nxt("rescued")
    elif pc in ("claimed", "rescued"):
        yield f"C{i} SENDS", nxt("sent" if pc == "claimed" else "sentr", sends=sends + 1)
    elif pc == "sent" and broken == "ack_before_outcome":
        yield f"C{i} acks before its outcome", \
            nxt("sent2", msg="acked" if msg == ("held", i) else msg)
    elif pc in ("sent", "sent2", "sentr"):
        owner = i if pc != "sentr" else first_claim(ledger, len(ledger))[1]
        after = "idle" if pc == "sent2" else "ack"
        out = ("O", owner, "sent")
        yield f"C{i} appends outcome sent for C{owner}'s block", nxt(after, ledger=ledger + (out,))
        if lost < 1:
            yield f"C{i} appends outcome, PubAck lost: appends again", \
                nxt(after, ledger=ledger + (out, out), lost=1)
    elif pc == "ack":
        yield f"C{i} acks", nxt("idle", msg="acked" if msg == ("held", i) else msg)


def env_steps(s, broken):
    ledger, msg, cons, canc, sends, allowed, crashes, lost, spur = s
    if msg not in ("ready", "acked"):
        h = msg[1]
        if not cons[h][0]:
            yield f"ack wait: redelivered from dead C{h}", (ledger, "ready", cons, canc, sends,
                                                            allowed, crashes, lost, spur)
        elif spur < 1:
            yield f"ack wait: redelivered from slow C{h}", (ledger, "ready", cons, canc, sends,
                                                            allowed, crashes, lost, 1)
    if canc == "start":
        yield "cancel appends", (ledger + (("X",),), msg, cons, "read", sends, allowed,
                                 crashes, lost, spur)
        if lost < 1:
            yield "cancel appends, PubAck lost: appends again", \
                (ledger + (("X",), ("X",)), msg, cons, "read", sends, allowed, crashes, 1, spur)
    elif canc == "read":
        if broken == "cancel_no_read":
            ans = "cancelled"
        else:
            ans = "cancelled" if first_claim(ledger, len(ledger)) == ("X",) else "too late"
        yield f"cancel reads the ledger before its entry: answers {ans}", \
            (ledger, msg, cons, ("ans", ans), sends, allowed, crashes, lost, spur)


def check(s, terminal, mode):
    ledger, msg, cons, canc, sends, allowed, crashes, lost, spur = s
    if sends > 1 + (allowed if mode == "alo" else 0):
        return f"sent {sends} times ({mode}, {allowed} second send(s) allowed)"
    if canc == ("ans", "cancelled") and sends > 0:
        return "cancel answered cancelled but the task was sent"
    win = first_claim(ledger, len(ledger))
    if win == ("X",) and sends > 0:
        return "the ledger says cancelled but the task was sent: status untruthful"
    if not terminal:
        return None
    if msg != "acked":
        return f"terminal state with the task not acked ({msg}): lost"
    out = outcome_of(ledger, win[1]) if win and win[0] == "C" else None
    if canc == ("ans", "too late") and sends == 0 and out != "dead":
        return "cancel answered too late but the task was never sent"
    if win and win[0] == "C" and out is None:
        return "terminal state whose winning block has no outcome: status untruthful"
    if sends > 0 and out not in ("sent", "dead"):
        return f"sent but the ledger says {out}: status untruthful"
    if sends > 0 and out == "dead" and not allowed:
        return "sent by a living member but the ledger says dead: status untruthful"
    if sends == 0 and out == "sent":
        return "ledger says sent but nothing was sent"
    return None


def run(broken, mode):
    init = ((), "ready", ((True, "idle"), (True, "idle")), "start", 0, 0, 0, 0, 0)

    def steps(s):
        for i in (0, 1):
            yield from cons_steps(s, i, broken, mode)
        yield from env_steps(s, broken)

    return explore.search(init, steps, lambda s, terminal: check(s, terminal, mode))


if __name__ == "__main__":
    sys.exit(explore.main(sys.argv[1:], "ledger model", BROKEN, run))
