"""The Kubernetes manifests' fields, beyond the schema check (kubernetes-validate --strict):
probes on the server's routes, the grace period above the drain, THREADS following the CPU
limit, selectors that select, the token as a mounted Secret, the image's user and defaults.
Run by packaging/test.sh with PyYAML; exits 1 naming every rule broken."""

import pathlib
import re
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


class UniqueKeys(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice (PyYAML keeps the last one silently)."""


def _mapping(loader, node, deep=False):
    keys = [loader.construct_object(k, deep=deep) for k, _ in node.value]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {sorted(dup)}", node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


UniqueKeys.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)

errors = []


def check(ok, what):
    if not ok:
        errors.append(what)


def load(name):
    docs = list(yaml.load_all((HERE / name).read_text(), Loader=UniqueKeys))
    check(len(docs) == 1, f"{name}: one document")
    return docs[0]


kustomization = load("kustomization.yaml")
resources = kustomization["resources"]
for f in sorted(p.name for p in HERE.glob("*.yaml")):
    check(f in resources or f in ("kustomization.yaml", "secret.example.yaml"), f"{f} is not in kustomization.yaml")
docs = {load(f)["kind"]: load(f) for f in resources}
for kind in ("Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"):
    check(kind in docs, f"no {kind}")

dep = docs["Deployment"]
pod = dep["spec"]["template"]["spec"]
labels = dep["spec"]["template"]["metadata"]["labels"]
check(dep["spec"]["selector"]["matchLabels"].items() <= labels.items(), "the Deployment's selector misses its pods")
(c,) = pod["containers"]
env = {e["name"]: e for e in c.get("env", [])}
port_names = {p["name"]: p["containerPort"] for p in c["ports"]}

# The image's defaults (Dockerfile) and the manifest's agree.
dockerfile = (ROOT / "packaging/docker/Dockerfile").read_text()
uid = int(re.search(r"^USER (\d+):(\d+)$", dockerfile, re.M).group(1))
image_languages = re.search(r"^\s+LANGUAGES=(\S+)", dockerfile, re.M).group(1)
check(pod["securityContext"]["runAsUser"] == uid, "runAsUser is not the image's USER")
check(pod["securityContext"]["runAsNonRoot"] is True, "runAsNonRoot")
check(env["LANGUAGES"]["value"] == image_languages, "LANGUAGES differs from the image's default")
check(env["PRELOAD"]["value"] == "1", "PRELOAD=1 (readiness means the models are loaded)")
check(c["image"].split(":")[0] in [i["name"] for i in kustomization.get("images", [])], "kustomization images: the image")
check(8080 in port_names.values(), "the container port is the image's PORT (8080)")

# Probes: liveness and startup on /health (200 while serving), readiness on /ready (503 until
# preloaded and while draining); the startup probe lets the first model download finish.
for probe, path in (("livenessProbe", "/health"), ("startupProbe", "/health"), ("readinessProbe", "/ready")):
    p = c.get(probe)
    check(p is not None, f"no {probe}")
    if p:
        check(p["httpGet"]["path"] == path, f"{probe} asks {p['httpGet']['path']}, not {path}")
        check(p["httpGet"]["port"] in port_names, f"{probe}'s port is not a named container port")
startup = c["startupProbe"]
check(startup["periodSeconds"] * startup["failureThreshold"] >= 600, "the startup probe allows under 10 minutes for the fetch")

# Shutdown: the grace period covers preStop, the drain and a margin.
drain = int(env["DRAIN_SECONDS"]["value"])
pre_stop = c.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
check(pod["terminationGracePeriodSeconds"] > pre_stop + drain, "terminationGracePeriodSeconds <= preStop + DRAIN_SECONDS")

# Compute threads follow the CPU limit, which equals the request (no throttling).
res = c["resources"]
check(res["requests"]["cpu"] == res["limits"]["cpu"], "CPU request != limit")
threads = env["THREADS"].get("valueFrom", {}).get("resourceFieldRef", {})
check(threads.get("resource") == "limits.cpu", "THREADS does not follow limits.cpu")
for k in ("cpu", "memory"):
    check(k in res["requests"] and k in res["limits"], f"resources: {k} request and limit")

# The token: a Secret mounted as a file, named by TRANSLATE_TOKEN_FILE; never in the environment.
check("TRANSLATE_TOKEN" not in env, "the token itself is in the environment")
token_file = env["TRANSLATE_TOKEN_FILE"]["value"]
volumes = {v["name"]: v for v in pod["volumes"]}
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
token_mount = [m for path, m in mounts.items() if token_file.startswith(path + "/")]
check(len(token_mount) == 1, "TRANSLATE_TOKEN_FILE is not under a mount")
if token_mount:
    vol = volumes[token_mount[0]["name"]]
    check("secret" in vol, "the token's volume is not a Secret")
    secret = load("secret.example.yaml")
    check(vol["secret"]["secretName"] == secret["metadata"]["name"], "secret.example.yaml names another Secret")
    keys = [i["key"] for i in vol["secret"].get("items", [])]
    check(all(k in secret["stringData"] for k in keys), "secret.example.yaml lacks the mounted key")
    check(token_file.endswith("/" + vol["secret"]["items"][0]["path"]), "the token's file name")
check("/models" in mounts and "emptyDir" in volumes[mounts["/models"]["name"]], "models: an emptyDir at /models")
sc = c["securityContext"]
check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False, "container securityContext")
check("/tmp" in mounts, "a writable /tmp (XDG_CACHE_HOME) beside the read-only root")

svc = docs["Service"]
check(svc["spec"]["selector"].items() <= labels.items(), "the Service selects no pod")
for p in svc["spec"]["ports"]:
    check(p["targetPort"] in port_names or p["targetPort"] in port_names.values(), "the Service's targetPort")

hpa = docs["HorizontalPodAutoscaler"]
ref = hpa["spec"]["scaleTargetRef"]
check((ref["kind"], ref["name"]) == ("Deployment", dep["metadata"]["name"]), "the HPA scales another object")
check(any(m["type"] == "Resource" and m["resource"]["name"] == "cpu" for m in hpa["spec"]["metrics"]), "the HPA is not on CPU")
check(hpa["spec"]["minReplicas"] >= 2, "minReplicas < 2")

pdb = docs["PodDisruptionBudget"]
check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(), "the PDB selects no pod")
check(pdb["spec"]["minAvailable"] < hpa["spec"]["minReplicas"], "the PDB would block every drain")

if errors:
    print("packaging/kubernetes:", *errors, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print(f"packaging/kubernetes: {len(resources)} manifests, fields ok")
