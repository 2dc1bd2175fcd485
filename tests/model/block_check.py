#!/usr/bin/env python3
"""Exhaustive check of the per-batch ledger's block protocol (issue 32 items 2 and 3), bounded.

As ledger_check.py, but a claim block names every task its consumer took in one pull (two
tasks, 0 and 1; the canceller cancels task 0), and one outcome record covers the block's
finished sends. Ledger entries: ("C", blk, ids) a claim block (blk = (consumer, n)),
("X", id) a cancel, ("O", ((blk, id, result), ...)) an outcome record. For each id the first
of a claim block naming it and a cancel of it decides. A consumer decides each id of its block
once its watcher passed the block: a cancel first: acked unsent; an earlier block first: acked
if that block has an outcome for the id, released (nak) if its owner lives, else rescued
(at-most-once: outcome "dead"; at-least-once: sent again); its own block first: sent. The
sends are one step each, then one outcome record for the block's sends, then one ack per
task. One consumer crash and one lost PubAck (the record appended twice) anywhere; one
ack-wait redelivery from a living holder. Every claim block, nak and redelivery adds to the
ledger, so the ledger is bounded (CAP entries): a state that would append past it is marked
capped, keeps the safety checks and skips the terminal ones.

Usage: block_check.py [--broken NAME] [--mode amo|alo]
"""
import sys

import explore

CAP = 7
TASKS = (0, 1)
BROKEN = {
    "send_before_watch": "a consumer sends its block as soon as it is appended, unwatched",
    "cancel_no_read": "a cancel answers cancelled after its PubAck without reading the ledger",
    "ack_before_outcome": "a consumer acks its tasks before their outcome record is in",
    "outcome_early": "the outcome record covers the whole block after its first send",
}

# state: (ledger, msgs, cons, canc, sends, allowed, crashes, lost, spur, capped)
#   msgs[id]: "ready" | ("held", i) | "acked"; cons[i]: (alive, pc, blk, todo, sent)
#   pc: idle, watch, send, out, ack; todo: ids left to send (or to ack), sent: ids sent


def decider(ledger, tid, upto=None):
    """The first entry of ledger[:upto] that decides task tid: a cancel or a claim block."""
    for e in ledger[:upto]:
        if (e[0] == "X" and e[1] == tid) or (e[0] == "C" and tid in e[2]):
            return e
    return None


def outcome(ledger, blk, tid):
    res = [r for e in ledger if e[0] == "O" for b, t, r in e[1] if b == blk and t == tid]
    return res[-1] if res else None


def put(s, **kw):
    names = ("ledger", "msgs", "cons", "canc", "sends", "allowed", "crashes", "lost", "spur",
             "capped")
    d = dict(zip(names, s))
    d.update(kw)
    if len(d["ledger"]) > CAP:  # past the bound: the append is not explored
        return s[:-1] + (1,)
    return tuple(d[n] for n in names)


def setc(cons, i, v):
    cl = list(cons)
    cl[i] = v
    return tuple(cl)


def seti(t, i, v):
    tl = list(t)
    tl[i] = v
    return tuple(tl)


def cons_steps(s, i, broken, mode):
    ledger, msgs, cons, canc, sends, allowed, crashes, lost, spur, capped = s
    alive, pc, blk, todo, sent = cons[i]
    if not alive:
        return
    if crashes < 1:
        # crashed between a send and its outcome record: a second send of it is allowed (alo)
        extra = tuple(1 if t in sent and pc in ("send", "out") else a
                      for t, a in zip(TASKS, allowed))
        yield f"C{i} crashes in {pc}", put(s, cons=setc(cons, i, (False, pc, blk, todo, sent)),
                                           allowed=extra, crashes=1)
    me = lambda pc2, b=blk, td=todo, st=sent: setc(cons, i, (True, pc2, b, td, st))
    if pc == "idle":
        got = tuple(t for t in TASKS if msgs[t] == "ready")
        if got:
            b = (i, sum(1 for e in ledger if e[0] == "C" and e[1][0] == i))
            m2 = tuple(("held", i) if t in got else msgs[t] for t in TASKS)
            nxt = "send" if broken == "send_before_watch" else "watch"
            yield f"C{i} pulls {got}, appends claim block {b}", \
                put(s, msgs=m2, ledger=ledger + (("C", b, got),), cons=me(nxt, b, got, ()))
            if lost < 1:
                yield f"C{i} pulls {got}, appends block {b}, PubAck lost: appends again", \
                    put(s, msgs=m2, ledger=ledger + (("C", b, got),) * 2, cons=me(nxt, b, got, ()),
                        lost=1)
    elif pc == "watch":
        upto = next(k for k, e in enumerate(ledger) if e[:2] == ("C", blk)) + 1
        send, m2, add = [], list(msgs), []
        for t in todo:
            win = decider(ledger, t, upto)
            if win[0] == "X" or (win[1] != blk and outcome(ledger, win[1], t)):
                m2[t] = "acked" if m2[t] == ("held", i) else m2[t]  # cancelled, or done before
            elif win[1] == blk:
                send.append(t)
            elif cons[win[1][0]][0]:
                m2[t] = "ready" if m2[t] == ("held", i) else m2[t]  # a live owner: nak
            elif mode == "amo":
                add.append((win[1], t, "dead"))
                m2[t] = "acked" if m2[t] == ("held", i) else m2[t]
            else:
                send.append(t)  # rescued: sent again, its outcome under the winning block
        led = ledger + ((("O", tuple(add)),) if add else ())
        yield f"C{i} watcher passed block {blk}: sends {tuple(send)}", \
            put(s, ledger=led, msgs=tuple(m2), cons=me("send" if send else "idle", td=tuple(send)))
    elif pc == "send" and len(sent) < len(todo):
        t = todo[len(sent)]
        led = ledger
        if broken == "outcome_early" and not sent:
            led = ledger + (("O", tuple((decider(ledger, u)[1], u, "sent") for u in todo)),)
        yield f"C{i} SENDS task {t}", put(s, ledger=led, sends=seti(sends, t, sends[t] + 1),
                                          cons=me("send", st=sent + (t,)))
    elif pc == "send" and broken == "ack_before_outcome":
        m2 = tuple("acked" if t in todo and msgs[t] == ("held", i) else msgs[t] for t in TASKS)
        yield f"C{i} acks {todo} before their outcome", put(s, msgs=m2, cons=me("out"))
    elif pc in ("send", "out"):
        rec = ("O", tuple((blk if decider(ledger, t)[1] == blk else decider(ledger, t)[1], t,
                           "sent") for t in todo))
        nxt = "idle" if pc == "out" else "ack"
        yield f"C{i} appends the outcome record of block {blk}", \
            put(s, ledger=ledger + (rec,), cons=me(nxt))
        if lost < 1:
            yield f"C{i} appends the outcome record, PubAck lost: appends again", \
                put(s, ledger=ledger + (rec, rec), cons=me(nxt), lost=1)
    elif pc == "ack":
        t = todo[0]
        m2 = seti(msgs, t, "acked" if msgs[t] == ("held", i) else msgs[t])
        rest = todo[1:]
        yield f"C{i} acks task {t}", put(s, msgs=m2, cons=me("ack" if rest else "idle", td=rest))


def env_steps(s, broken):
    ledger, msgs, cons, canc, sends, allowed, crashes, lost, spur, capped = s
    for t in TASKS:
        if msgs[t] not in ("ready", "acked"):
            h = msgs[t][1]
            if not cons[h][0]:
                yield f"ack wait: task {t} redelivered from dead C{h}", put(s, msgs=seti(msgs, t, "ready"))
            elif spur < 1:
                yield f"ack wait: task {t} redelivered from slow C{h}", \
                    put(s, msgs=seti(msgs, t, "ready"), spur=1)
    if canc == "start":
        yield "cancel of task 0 appends", put(s, ledger=ledger + (("X", 0),), canc="read")
        if lost < 1:
            yield "cancel appends, PubAck lost: appends again", \
                put(s, ledger=ledger + (("X", 0),) * 2, canc="read", lost=1)
    elif canc == "read":
        win = decider(ledger, 0)
        ans = "cancelled" if broken == "cancel_no_read" or win[0] == "X" else "too late"
        yield f"cancel reads the ledger before its entry: answers {ans}", put(s, canc=("ans", ans))


def check(s, terminal, mode):
    ledger, msgs, cons, canc, sends, allowed, crashes, lost, spur, capped = s
    for t in TASKS:
        if sends[t] > 1 + (allowed[t] if mode == "alo" else 0):
            return f"task {t} sent {sends[t]} times ({mode})"
        win = decider(ledger, t)
        if win and win[0] == "X" and sends[t]:
            return f"the ledger says task {t} cancelled but it was sent"
    if canc == ("ans", "cancelled") and sends[0]:
        return "cancel answered cancelled but task 0 was sent"
    if not terminal or capped:
        return None
    for t in TASKS:
        if msgs[t] != "acked":
            return f"terminal state with task {t} not acked ({msgs[t]}): lost"
        win = decider(ledger, t)
        out = outcome(ledger, win[1], t) if win and win[0] == "C" else None
        if win and win[0] == "C" and out is None:
            return f"task {t}'s winning block has no outcome: status untruthful"
        if sends[t] == 0 and out == "sent":
            return f"the ledger says task {t} sent but nothing was sent"
        if sends[t] and out == "dead" and not allowed[t]:
            return f"task {t} sent by a living member but the ledger says dead"
    if canc == ("ans", "too late") and sends[0] == 0 and outcome(ledger, decider(ledger, 0)[1], 0) != "dead":
        return "cancel answered too late but task 0 was never sent"
    return None


def run(broken, mode):
    idle = (True, "idle", None, (), ())
    init = ((), ("ready", "ready"), (idle, idle), "start", (0, 0), (0, 0), 0, 0, 0, 0)

    def steps(s):
        if s[-1]:
            return  # capped: past the bound, not explored further
        for i in (0, 1):
            yield from cons_steps(s, i, broken, mode)
        yield from env_steps(s, broken)

    return explore.search(init, steps, lambda s, terminal: check(s, terminal, mode))


if __name__ == "__main__":
    sys.exit(explore.main(sys.argv[1:], "block model", BROKEN, run))
