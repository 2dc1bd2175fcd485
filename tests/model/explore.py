"""Breadth-first exhaustive search shared by the protocol models (kv_check.py, ledger_check.py).

A model gives its initial state, a function of a state to its (label, next state) steps, and a
check of a state (terminal or not) returning what is broken or None. A step whose label has
"crashes" in it does not count as progress: a state whose only steps are crashes is terminal.
"""
import collections
import sys


def search(init, steps, check):
    parent = {init: None}
    q = collections.deque([init])
    terminals = 0
    while q:
        s = q.popleft()
        succ = list(steps(s))
        terminal = not any("crashes" not in label for label, _ in succ)
        terminals += terminal
        bad = check(s, terminal)
        if bad:
            trace = []
            while parent[s]:
                label, s = parent[s]
                trace.append(label)
            return bad, trace[::-1], len(parent), terminals
        for label, t in succ:
            if t not in parent:
                parent[t] = (label, s)
                q.append(t)
    return None, None, len(parent), terminals


def main(argv, title, broken_variants, run):
    """run(broken, mode) -> search()'s result; prints each mode's result, returns the exit code."""
    broken = None
    modes = ["amo", "alo"]
    if "--broken" in argv:
        broken = argv[argv.index("--broken") + 1]
        if broken not in broken_variants:
            print(f"unknown variant {broken}; known: {', '.join(broken_variants)}")
            return 2
    if "--mode" in argv:
        modes = [argv[argv.index("--mode") + 1]]
    rc = 0
    for mode in modes:
        bad, trace, states, terms = run(broken, mode)
        name = f"{title}, {mode}" + (f", broken: {broken}" if broken else "")
        if bad:
            rc = 1
            print(f"{name}: INVARIANT BROKEN: {bad}\n  trace:")
            for n, label in enumerate(trace, 1):
                print(f"   {n:2}. {label}")
        else:
            print(f"{name}: ok, {states} states, {terms} terminal")
        sys.stdout.flush()
    return rc
