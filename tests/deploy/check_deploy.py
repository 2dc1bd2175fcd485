#!/usr/bin/python3
"""Checks deploy/ on a machine without a container engine: the image recipe, the compose
file and the Kubernetes manifests are parsed and held to what the binaries need, and every
nats-server config is tested by nats-server itself (-t). The same configs run for real in
tests/it/test_roles.c.

usage: check_deploy.py SOURCE_DIR [SENDAT_BIN SENDAT_CONSUMER_BIN]
(with the binaries, the image's runtime packages are checked against what they link)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
BINARIES = sys.argv[2:4]
DEPLOY = os.path.join(ROOT, "deploy")
NATS_SERVER = os.environ.get("NATS_SERVER") or "nats-server"
PASSWORDS = {"SENDAT_ADMIN_PASSWORD": "a", "SENDAT_PRODUCER_PASSWORD": "p",
             "SENDAT_CONSUMER_PASSWORD": "c"}
TEST_ONLY_PACKAGES = {"libcmocka-dev", "nats-server", "python3", "python3-aiosmtpd",
                      "python3-yaml", "python3-jsonschema", "curl", "git", "clang", "libclang-rt-14-dev", "clang-format",
                      "chromium", "debhelper", "lintian", "debootstrap"}
HTTP_PORT = 8080
DRAIN_S = 20

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def load_yaml_docs(*parts):
    return [d for d in yaml.safe_load_all(read(*parts)) if d is not None]


# ---------------------------------------------------------------- image

def dockerfile_stages():
    """[(from, [instruction lines])] with continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", read("deploy", "Dockerfile"))
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append((line.split()[1], []))
        elif stages:
            stages[-1][1].append(line)
    return stages


def apt_packages(lines):
    pkgs = set()
    for line in lines:
        if line.startswith("RUN") and "apt-get install" in line:
            part = line.split("apt-get install", 1)[1].split("&&")[0]
            pkgs |= {w for w in part.split() if not w.startswith("-")}
    return pkgs


def install_deps_packages():
    m = re.search(r"pkgs=\(([^)]*)\)", read("deploy", "install-deps.sh"))
    return set(m.group(1).split()) if m else set()


def package_of(path):
    """Debian package owning a library path (usrmerge: try /usr and / spellings)."""
    real = os.path.realpath(path)
    for p in (path, real, "/usr" + real, real.replace("/usr/lib/", "/lib/", 1)):
        out = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if out.returncode == 0:
            return out.stdout.split(":")[0]
    return None


SANITIZER_RUNTIME = re.compile(r"lib(asan|ubsan|lsan|tsan)\.so")


def needed_packages(binary):
    """Packages of the libraries the binary links directly (DT_NEEDED)."""
    needed = re.findall(r"\(NEEDED\).*\[(.+)\]",
                        subprocess.run(["readelf", "-d", binary], capture_output=True,
                                       text=True).stdout)
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)",
                            subprocess.run(["ldd", binary], capture_output=True,
                                           text=True).stdout, re.M))
    return {lib: package_of(paths[lib]) if lib in paths else None for lib in needed}


def check_image():
    stages = dockerfile_stages()
    # build, runtime (no binaries: tests/containers/run.sh adds its own), runtime + binaries
    if not check(len(stages) == 3 and stages[2][0] == "runtime",
                 "Dockerfile: want a build stage, a runtime stage and the image FROM runtime"):
        return
    df = read("deploy", "Dockerfile")
    check(re.search(r"ARG DEBIAN=debian:bookworm-slim", df) and
          all(base == "${DEBIAN}" for base, _ in stages[:2]), "Dockerfile: both stages bookworm-slim")
    check(re.search(r"^FROM \$\{DEBIAN\} AS runtime$", df, re.M), "Dockerfile: stage 'runtime'")
    build, runtime = stages[0][1], stages[1][1] + stages[2][1]
    want = install_deps_packages() - TEST_ONLY_PACKAGES
    have = apt_packages(build)
    check(have == want, "Dockerfile build stage packages %s != install-deps.sh without test "
          "tools %s" % (sorted(have), sorted(want)))
    check(any("-DSENDAT_TESTS=OFF" in line for line in build), "Dockerfile: -DSENDAT_TESTS=OFF")
    run_pkgs = apt_packages(runtime)
    check(not [p for p in run_pkgs if p.endswith("-dev")], "Dockerfile: -dev package at runtime")
    check("ca-certificates" in run_pkgs, "Dockerfile: ca-certificates for TLS webhooks/SMTP")
    users = [l.split()[1] for l in runtime if l.startswith("USER ")]
    check(users and users[-1].split(":")[0] not in ("0", "root"), "Dockerfile: runs as root")
    check(any(l.startswith("COPY --from=build") and "sendat-consumer" in l and
              "producer/sendat" in l for l in runtime), "Dockerfile: both binaries copied")
    check(any(l == "EXPOSE %d" % HTTP_PORT for l in runtime), "Dockerfile: EXPOSE 8080")
    check(any(l.startswith("HEALTHCHECK ") and "sendat-ready" in l for l in runtime) and
          any(l.startswith("COPY deploy/sendat-ready ") for l in runtime),
          "Dockerfile: no HEALTHCHECK with deploy/sendat-ready")
    for binary in BINARIES:
        for lib, pkg in needed_packages(binary).items():
            if SANITIZER_RUNTIME.match(lib):
                continue  # the test suite's second run builds with ASan + UBSan; images never do
            check(pkg in run_pkgs or pkg == "libc6",
                  "Dockerfile runtime stage lacks %s (for %s of %s)" % (pkg, lib, binary))
    ignore = read(".dockerignore").split()
    for line in build:
        if line.startswith("COPY ") and "--from" not in line:
            src = line.split()[1]
            check("!" + src in ignore or "!" + src + "/" in ignore,
                  ".dockerignore keeps %s out of the build context" % src)


# ---------------------------------------------------------------- compose

def env_of(service):
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(e.split("=", 1) if "=" in e else (e, None) for e in env)
    return env


def check_compose():
    doc = load_yaml_docs("deploy", "docker-compose.yml")[0]
    services = doc.get("services", {})
    nodes = ["n1", "n2", "n3"]
    urls = {"nats://%s:4222" % n for n in nodes}
    for n in nodes:
        s = services.get(n, {})
        image = re.sub(r"^\$\{SENDAT_NATS_IMAGE:-(.*)\}$", r"\1", s.get("image", ""))
        check(image.startswith("nats:"), "compose: %s is not a nats image by default" % n)
        check(s.get("command") == ["-c", "/etc/nats/%s.conf" % n],
              "compose: %s does not run deploy/nats/%s.conf" % (n, n))
        check("./nats:/etc/nats:ro" in s.get("volumes", []), "compose: %s lacks ./nats" % n)
        check(set(PASSWORDS) <= set(env_of(s)), "compose: %s lacks the role passwords" % n)
    init = services.get("init", {})
    check(init.get("entrypoint", []) + init.get("command", []) ==
          ["sendat", "init", "--replicas", "3"], "compose: init is not `sendat init --replicas 3`")
    check(all(init.get("depends_on", {}).get(n, {}).get("condition") == "service_healthy"
              for n in nodes), "compose: init does not wait for healthy nodes")
    con = services.get("consumer", {})
    check("container_name" not in con, "compose: consumer container_name prevents --scale")
    check(not [p for p in con.get("ports", []) if ":" in str(p)],
          "compose: consumer publishes a host port, which prevents --scale")
    check(con.get("depends_on", {}).get("init", {}).get("condition") ==
          "service_completed_successfully", "compose: consumer starts before init finished")
    test = str(con.get("healthcheck", {}).get("test"))
    # sendat-ready (the image's check) asks the port of SENDAT_HTTP_ADDR
    port = str(env_of(con).get("SENDAT_HTTP_ADDR", "")).endswith(":%d" % HTTP_PORT)
    check((str(HTTP_PORT) in test or ("sendat-ready" in test and port)) and "/readyz" in test,
          "compose: consumer healthcheck")
    grace = re.match(r"(\d+)s$", str(con.get("stop_grace_period", "")))
    check(grace and int(grace.group(1)) > DRAIN_S, "compose: stop_grace_period <= drain timeout")
    prod = services.get("producer", {})
    check(prod.get("entrypoint") == ["sendat"] and prod.get("profiles"),
          "compose: producer is not a `docker compose run` CLI under a profile")
    for name, user in (("init", "admin"), ("consumer", "consumer"), ("producer", "producer")):
        env = env_of(services.get(name, {}))
        check(env.get("SENDAT_NATS_USER") == user, "compose: %s is not user %s" % (name, user))
        check(set(str(env.get("SENDAT_NATS_URL", "")).split(",")) == urls,
              "compose: %s does not get all three node URLs" % name)


# ---------------------------------------------------------------- kubernetes

def k8s_objects():
    objs = {}
    for name in sorted(os.listdir(os.path.join(DEPLOY, "k8s"))):
        if name.endswith(".yaml") and name != "nats-values.yaml":
            for d in load_yaml_docs("deploy", "k8s", name):
                check("kind" in d and "apiVersion" in d, "k8s/%s: a document without kind" % name)
                objs.setdefault(d.get("kind"), []).append(d)
    return objs


def container_env(c):
    return {e["name"]: e for e in c.get("env", [])}


def check_probes(c):
    ports = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = c.get(probe, {}).get("httpGet", {})
        port = ports.get(get.get("port"), get.get("port"))
        check(get.get("path") == path and port == HTTP_PORT,
              "k8s: %s is not GET %s on %d" % (probe, path, HTTP_PORT))
    addr = container_env(c).get("SENDAT_HTTP_ADDR", {}).get("value", ":8080")
    check(addr.endswith(":%d" % HTTP_PORT), "k8s: SENDAT_HTTP_ADDR is not the probed port")


def check_secrets_exist(objs, pod):
    secrets = {s["metadata"]["name"]: s for s in objs.get("Secret", [])}
    refs = [e["valueFrom"]["secretKeyRef"] for c in pod.get("containers", [])
            for e in c.get("env", []) if "secretKeyRef" in e.get("valueFrom", {})]
    refs += [{"name": v["secret"]["secretName"]} for v in pod.get("volumes", []) if "secret" in v]
    for r in refs:
        s = secrets.get(r["name"])
        check(s is not None and ("key" not in r or r["key"] in s.get("stringData", {})),
              "k8s: secret %s/%s is not in secret.example.yaml" % (r["name"], r.get("key", "")))


def check_deployment(objs):
    dep = objs.get("Deployment", [{}])[0]
    pod = dep.get("spec", {}).get("template", {}).get("spec", {})
    labels = dep.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
    c = pod.get("containers", [{}])[0]
    check_probes(c)
    req = c.get("resources", {}).get("requests", {})
    check("cpu" in req and "memory" in req, "k8s: consumer has no resource requests")
    check(pod.get("terminationGracePeriodSeconds", 30) > DRAIN_S,
          "k8s: terminationGracePeriodSeconds <= SENDAT_DRAIN_TIMEOUT")
    check(pod.get("securityContext", {}).get("runAsNonRoot") is True, "k8s: consumer may run as root")
    check(container_env(c).get("SENDAT_NATS_USER", {}).get("value") == "consumer",
          "k8s: consumer does not use the consumer user")
    check_secrets_exist(objs, pod)
    sel = dep.get("spec", {}).get("selector", {}).get("matchLabels", {})
    check(sel and sel.items() <= labels.items(), "k8s: Deployment selector misses its pods")
    for pdb in objs.get("PodDisruptionBudget", [None]):
        psel = (pdb or {}).get("spec", {}).get("selector", {}).get("matchLabels", {})
        check(psel and psel.items() <= labels.items(), "k8s: PDB selector misses the consumers")
    for hpa in objs.get("HorizontalPodAutoscaler", [None]):
        ref = (hpa or {}).get("spec", {}).get("scaleTargetRef", {})
        check(ref.get("kind") == "Deployment" and
              ref.get("name") == dep.get("metadata", {}).get("name"), "k8s: HPA target")


def check_job(objs):
    job = objs.get("Job", [{}])[0]
    pod = job.get("spec", {}).get("template", {}).get("spec", {})
    c = pod.get("containers", [{}])[0]
    check(c.get("command", []) + c.get("args", []) == ["sendat", "init", "--replicas", "3"],
          "k8s: the Job is not `sendat init --replicas 3`")
    check(container_env(c).get("SENDAT_NATS_USER", {}).get("value") == "admin",
          "k8s: sendat init does not run as admin")
    check_secrets_exist(objs, pod)


# ---------------------------------------------------------------- nats

def conf_permissions():
    """{user: (publish allow, publish deny, subscribe allow, allow_responses)} from accounts.conf
    (the file the tests run)."""
    text = re.sub(r"#.*", "", read("deploy", "nats", "accounts.conf"))  # subjects have no '#'
    perms = {}
    for block in re.split(r"(?=\{\s*user:)", text)[1:]:
        user = re.match(r"\{\s*user:\s*(\w+)", block).group(1)
        allow = re.search(r"publish:\s*\{\s*allow:\s*\[(.*?)\]", block, re.S)
        deny = re.search(r"publish:\s*\{\s*allow:\s*\[.*?\],\s*deny:\s*\[(.*?)\]", block, re.S)
        sub = re.search(r"subscribe:\s*\{\s*allow:\s*\[(.*?)\]", block, re.S)
        if allow:
            perms[user] = (re.findall(r'"([^"]+)"', allow.group(1)),
                           re.findall(r'"([^"]+)"', deny.group(1)) if deny else None,
                           re.findall(r'"([^"]+)"', sub.group(1)) if sub else None,
                           bool(re.search(r"allow_responses:\s*true", block)))
    return perms


def check_helm_values():
    v = load_yaml_docs("deploy", "k8s", "nats-values.yaml")[0].get("config", {})
    check(v.get("cluster", {}).get("enabled") is True and v["cluster"].get("replicas") == 3,
          "nats-values: not a 3-node cluster")
    check(v.get("jetstream", {}).get("enabled") is True, "nats-values: JetStream off")
    users = v.get("merge", {}).get("accounts", {}).get("SENDAT", {}).get("users", [])
    perm = {u["user"]: u.get("permissions") for u in users}
    helm = {u: (p["publish"].get("allow"), p["publish"].get("deny"), p.get("subscribe", {}).get("allow"),
                p.get("allow_responses") is True)
            if p else None for u, p in perm.items()}
    conf = conf_permissions()
    check(set(conf) == {"producer", "consumer"}, "accounts.conf: roles %s" % sorted(conf))
    for user, perms in conf.items():
        check(helm.get(user) == perms, "nats-values: %s's permissions differ from accounts.conf" % user)
    # a consumer also answers probes of its liveness (consumer/ledger/members.c)
    for user, extra in (("producer", []), ("consumer", ["sendat.alive.*"])):
        check(conf.get(user, ([], None, None, False))[2] == ["_INBOX_sendat_%s.>" % user] + extra,
              "accounts.conf: %s may subscribe below its own inbox prefix only" % user)
    check(conf.get("consumer", ([], None, None, False))[3] and
          not conf.get("producer", ([], None, None, False))[3],
          "accounts.conf: only consumers answer requests (allow_responses)")
    check(conf.get("consumer", ([], None, None, False))[1] ==
          ["sendat.task.*.w.*", "sendat.shard.*.*.w.*"],
          "accounts.conf: consumers must be denied the window levels (producers' alone)")
    # a claim key under a DEL or PURGE marker or junk (any writer of the claims bucket can leave
    # one) is resolved from its history, and a cancel record likewise (common/claim.h
    # sa_claim_get_under, common/cancelrec.h, issue 24.6): both read it by direct gets next by
    # subject (common/kvhist.h); without these the reader could not and would nak for ever
    history = ["$JS.API.DIRECT.GET.KV_sendat_claims", "$JS.API.DIRECT.GET.KV_sendat_cancel"]
    for user in ("consumer", "producer"):
        check(all(h in conf.get(user, ([], None, None, False))[0] for h in history),
              "accounts.conf: %ss may not read a claim's or cancel record's history" % user)
    # the members bucket and the liveness subjects are the consumers' alone: no other role may
    # name an instance to probe or answer for one (consumer/ledger/members.c, issue 24.6)
    for user, (allow, _deny, sub, _resp) in conf.items():
        if user == "consumer":
            continue
        check(not any(s.startswith("$KV.sendat_members") or s.startswith("sendat.alive")
                      or s in (">", "$KV.>") for s in allow)
              and not any(s.startswith("sendat.alive") or s == ">" for s in sub or []),
              "accounts.conf: %s may write the members bucket or use sendat.alive.*" % user)
    check("admin" in helm and helm["admin"] is None, "nats-values: admin user")


def nats_test(conf, env):
    out = subprocess.run([NATS_SERVER, "-t", "-c", conf], capture_output=True, text=True,
                         env=env, timeout=30)
    return out.returncode, out.stdout + out.stderr


def make_certs(d):
    def run(*args):
        subprocess.run(args, check=True, capture_output=True, cwd=d)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        "/CN=test-ca", "-keyout", "ca.key", "-out", "ca.crt")
    for name in ("server", "route"):
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=n1",
            "-keyout", name + ".key", "-out", name + ".csr")
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write("subjectAltName=DNS:n1,DNS:n2,DNS:n3\n"
                    "extendedKeyUsage=serverAuth,clientAuth\n")
        run("openssl", "x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-out", name + ".crt", "-extfile", name + ".ext")


def check_nats_configs():
    env = dict(os.environ, **PASSWORDS)
    nats_dir = os.path.join(DEPLOY, "nats")
    for i in (1, 2, 3):
        conf = os.path.join(nats_dir, "n%d.conf" % i)
        check(re.search(r"^server_name: n%d$" % i, read("deploy", "nats", "n%d.conf" % i), re.M),
              "n%d.conf: server_name" % i)
        rc, out = nats_test(conf, env)
        check(rc == 0, "nats-server -t %s: %s" % (conf, out.strip()))
    routes = re.findall(r"nats-route://(n\d):6222", read("deploy", "nats", "cluster.conf"))
    check(sorted(routes) == ["n1", "n2", "n3"], "cluster.conf: routes %s" % routes)
    bare = {k: v for k, v in os.environ.items() if k not in PASSWORDS}
    rc, out = nats_test(os.path.join(nats_dir, "n1.conf"), bare)
    check(rc != 0 and "SENDAT_ADMIN_PASSWORD" in out, "n1.conf starts without passwords set")
    check_shard_permissions(env)
    check_tls_config(env)


def check_shard_permissions(env):
    """shard-permissions.sh N: the stream and bucket names of shards 1..N-1 beside shard 0's,
    in a file nats-server accepts."""
    script = os.path.join(DEPLOY, "nats", "shard-permissions.sh")
    text = subprocess.run(["bash", script, "4"], check=True, capture_output=True,
                          text=True).stdout
    def naming(pattern, lines):
        return len([l for l in lines if l.lstrip().startswith('"') and re.search(pattern, l)])
    base = naming(r"SENDAT_TASKS\b|sendat_claims\b", read("deploy", "nats", "accounts.conf").split("\n"))
    for k in (1, 2, 3):
        got = naming(r"(SENDAT_TASKS|sendat_claims)_%d\b" % k, text.split("\n"))
        check(base > 0 and got == base, "shard-permissions.sh: shard %d in %d of %d" % (k, got, base))
    check(subprocess.run(["bash", script, "0"], capture_output=True).returncode == 2,
          "shard-permissions.sh 0 is refused")
    with tempfile.TemporaryDirectory() as d:
        for name in os.listdir(os.path.join(DEPLOY, "nats")):
            shutil.copy(os.path.join(DEPLOY, "nats", name), d)
        with open(os.path.join(d, "accounts.conf"), "w") as f:
            f.write(text)
        rc, out = nats_test(os.path.join(d, "n1.conf"), env)
        check(rc == 0, "nats-server -t with shard-permissions.sh 4: %s" % out.strip())


def check_tls_config(env):
    if not shutil.which("openssl"):
        print("check_deploy: no openssl, tls.conf not tested")
        return
    with tempfile.TemporaryDirectory() as d:
        make_certs(d)
        for name in os.listdir(os.path.join(DEPLOY, "nats")):
            text = read("deploy", "nats", name).replace("/etc/nats/certs", d)
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        with open(os.path.join(d, "n1-tls.conf"), "w") as f:
            f.write("server_name: n1\ninclude ./tls.conf\n")
        rc, out = nats_test(os.path.join(d, "n1-tls.conf"), env)
        check(rc == 0, "nats-server -t with tls.conf: %s" % out.strip())


def check_demo():
    """deploy/demo.sh polls log files that a background process writes: a poll that can run
    before the process has made its file must not print `grep: ...: No such file or
    directory` (issue 28, item 13), so each polled file is made first or grep is told -s."""
    lines = read("deploy", "demo.sh").splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"for _ in .*grep -(\w+) .*?(\"\$work/[^\"]+\")", line)
        if not m:
            continue
        made = any(re.match(r"\s*: > " + re.escape(m.group(2)) + r"\s*(#.*)?$", l) for l in lines[:i])
        check("s" in m.group(1) or made,
              "demo.sh line %d polls %s before anything made it (grep says No such file)"
              % (i + 1, m.group(2)))


def main():
    check_demo()
    check_image()
    check_compose()
    objs = k8s_objects()
    check_deployment(objs)
    check_job(objs)
    check_helm_values()
    check_nats_configs()
    for f in failures:
        print("FAIL:", f)
    print("check_deploy: %d problem(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
