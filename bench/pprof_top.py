# Reads a Go pprof CPU profile (gzip'd profile.proto, e.g. from nats-server --profile PORT:
#   curl -o cpu.pb.gz "http://127.0.0.1:PORT/debug/pprof/profile?seconds=30")
# without Go's toolchain, and prints the functions by flat and by cumulative share.
#   python3 bench/pprof_top.py cpu.pb.gz [FLAT_ROWS [CUM_ROWS]]
# Debian's nats-server is stripped, so perf shows addresses only; the profile names functions.
import gzip, sys, collections
def varint(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        elif t == 1: v = b[i:i+8]; i += 8
        elif t == 5: v = b[i:i+4]; i += 4
        yield f, t, v
def packed(t, v):
    if t == 0: return [v]
    out = []; i = 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out
def load(path):
    """The profile's samples as (weight in ns, [function names, leaf first])."""
    data = gzip.decompress(open(path, 'rb').read())
    strings = []; samples = []; locs = {}; funcs = {}
    for f, t, v in fields(data):
        if f == 6: strings.append(v.decode('utf-8', 'replace'))
        elif f == 2:
            ids = []; vals = []
            for f2, t2, v2 in fields(v):
                if f2 == 1: ids += packed(t2, v2)
                elif f2 == 2: vals += packed(t2, v2)
            samples.append((ids, vals))
        elif f == 4:
            lid = 0; fl = []
            for f2, t2, v2 in fields(v):
                if f2 == 1: lid = v2
                elif f2 == 4:
                    for f3, t3, v3 in fields(v2):
                        if f3 == 1: fl.append(v3)
            locs[lid] = fl  # inlined first, caller last
        elif f == 5:
            fid = 0; name = 0
            for f2, t2, v2 in fields(v):
                if f2 == 1: fid = v2
                elif f2 == 2: name = v2
            funcs[fid] = name
    return [(vals[-1], [strings[funcs[fid]] for lid in ids for fid in locs.get(lid, [])])
            for ids, vals in samples]
def main():
    flat = collections.Counter(); cum = collections.Counter(); total = 0
    for w, stack in load(sys.argv[1]):
        total += w
        if stack: flat[stack[0]] += w
        for n in set(stack): cum[n] += w
    print("total %.2f s" % (total / 1e9))
    print("-- flat"); [print("%5.1f%%  %s" % (100.0 * w / total, n)) for n, w in flat.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 30)]
    print("-- cumulative"); [print("%5.1f%%  %s" % (100.0 * w / total, n)) for n, w in cum.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 60)]
if __name__ == "__main__":
    main()
