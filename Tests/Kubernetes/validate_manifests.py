#!/usr/bin/env python3
"""Offline checks of deploy/kubernetes/*.yaml: every field name against the Kubernetes API
reference (v1.31: the fields these kinds may hold, transcribed below), the types of values,
and what Courier's setup relies on (an Indexed Job, Forbid, JOB_COMPLETIONS matching
completions, the ConfigMap's job file).

Usage: validate_manifests.py FOLDER [--extract-job FILE] [--dockerfile FILE]
Prints one line per problem and exits 1 when there is any; with --extract-job, writes the
ConfigMap's job.json to FILE (for `courier validate`).
"""
import sys

import yaml

# Field names per object type, from the Kubernetes API reference. A type is either another
# entry of this table, "str", "int", "bool", "map" (string to string), "any", or a list of
# one of those written as [type].
SCHEMA = {
    "ObjectMeta": {
        "name": "str", "namespace": "str", "labels": "map", "annotations": "map",
        "generateName": "str",
    },
    "ConfigMap": {
        "apiVersion": "str", "kind": "str", "metadata": "ObjectMeta", "data": "map",
        "binaryData": "map", "immutable": "bool",
    },
    "Secret": {
        "apiVersion": "str", "kind": "str", "metadata": "ObjectMeta", "data": "map",
        "stringData": "map", "type": "str", "immutable": "bool",
    },
    "PersistentVolumeClaim": {
        "apiVersion": "str", "kind": "str", "metadata": "ObjectMeta", "spec": "PVCSpec",
    },
    "PVCSpec": {
        "accessModes": ["str"], "resources": "VolumeResourceRequirements",
        "storageClassName": "str", "volumeMode": "str", "volumeName": "str", "selector": "any",
    },
    "VolumeResourceRequirements": {"requests": "map", "limits": "map"},
    "CronJob": {
        "apiVersion": "str", "kind": "str", "metadata": "ObjectMeta", "spec": "CronJobSpec",
    },
    "CronJobSpec": {
        "schedule": "str", "timeZone": "str", "concurrencyPolicy": "str",
        "startingDeadlineSeconds": "int", "successfulJobsHistoryLimit": "int",
        "failedJobsHistoryLimit": "int", "suspend": "bool", "jobTemplate": "JobTemplateSpec",
    },
    "JobTemplateSpec": {"metadata": "ObjectMeta", "spec": "JobSpec"},
    "Job": {"apiVersion": "str", "kind": "str", "metadata": "ObjectMeta", "spec": "JobSpec"},
    "JobSpec": {
        "completionMode": "str", "completions": "int", "parallelism": "int",
        "backoffLimit": "int", "backoffLimitPerIndex": "int", "maxFailedIndexes": "int",
        "activeDeadlineSeconds": "int", "ttlSecondsAfterFinished": "int", "suspend": "bool",
        "podFailurePolicy": "any", "podReplacementPolicy": "str", "manualSelector": "bool",
        "selector": "any", "template": "PodTemplateSpec",
    },
    "PodTemplateSpec": {"metadata": "ObjectMeta", "spec": "PodSpec"},
    "PodSpec": {
        "restartPolicy": "str", "securityContext": "PodSecurityContext",
        "containers": ["Container"], "initContainers": ["Container"], "volumes": ["Volume"],
        "terminationGracePeriodSeconds": "int", "serviceAccountName": "str",
        "nodeSelector": "map", "tolerations": "any", "affinity": "any",
        "imagePullSecrets": "any", "priorityClassName": "str",
    },
    "PodSecurityContext": {
        "runAsNonRoot": "bool", "runAsUser": "int", "runAsGroup": "int", "fsGroup": "int",
        "seccompProfile": "any", "supplementalGroups": ["int"],
    },
    "Container": {
        "name": "str", "image": "str", "imagePullPolicy": "str", "command": ["str"],
        "args": ["str"], "env": ["EnvVar"], "envFrom": "any", "resources": "ResourceRequirements",
        "securityContext": "SecurityContext", "volumeMounts": ["VolumeMount"],
        "workingDir": "str", "ports": "any",
    },
    "EnvVar": {"name": "str", "value": "str", "valueFrom": "EnvVarSource"},
    "EnvVarSource": {
        "secretKeyRef": "KeySelector", "configMapKeyRef": "KeySelector", "fieldRef": "any",
        "resourceFieldRef": "any",
    },
    "KeySelector": {"name": "str", "key": "str", "optional": "bool"},
    "ResourceRequirements": {"requests": "map", "limits": "map"},
    "SecurityContext": {
        "allowPrivilegeEscalation": "bool", "readOnlyRootFilesystem": "bool",
        "runAsNonRoot": "bool", "runAsUser": "int", "capabilities": "any",
        "privileged": "bool",
    },
    "VolumeMount": {"name": "str", "mountPath": "str", "readOnly": "bool", "subPath": "str"},
    "Volume": {
        "name": "str", "configMap": "ConfigMapVolumeSource",
        "secret": "SecretVolumeSource", "persistentVolumeClaim": "PVCVolumeSource",
        "emptyDir": "any",
    },
    "ConfigMapVolumeSource": {"name": "str", "items": "any", "defaultMode": "int", "optional": "bool"},
    "SecretVolumeSource": {"secretName": "str", "items": "any", "defaultMode": "int", "optional": "bool"},
    "PVCVolumeSource": {"claimName": "str", "readOnly": "bool"},
}

KINDS = {
    ("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "PersistentVolumeClaim"),
    ("batch/v1", "CronJob"), ("batch/v1", "Job"),
}
REQUIRED = {
    "Container": ["name", "image"], "EnvVar": ["name"],
    "VolumeMount": ["name", "mountPath"], "Volume": ["name"], "CronJobSpec": ["schedule", "jobTemplate"],
    "PodSpec": ["containers"], "KeySelector": ["key"],
}


def check(value, kind, path, problems):
    if isinstance(kind, list):
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list")
            return
        for index, item in enumerate(value):
            check(item, kind[0], f"{path}[{index}]", problems)
        return
    if kind == "any":
        return
    if kind == "str":
        if not isinstance(value, str):
            problems.append(f"{path}: expected a string, got {type(value).__name__}")
        return
    if kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"{path}: expected an integer")
        return
    if kind == "bool":
        if not isinstance(value, bool):
            problems.append(f"{path}: expected true or false")
        return
    if kind == "map":
        if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            problems.append(f"{path}: expected a map of strings to strings (quote numbers)")
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: expected an object ({kind})")
        return
    fields = SCHEMA[kind]
    for name, item in value.items():
        if name not in fields:
            problems.append(f"{path}.{name}: not a field of {kind}")
        else:
            check(item, fields[name], f"{path}.{name}", problems)
    for name in REQUIRED.get(kind, []):
        if name not in value:
            problems.append(f"{path}: {kind} needs {name}")


def courier_rules(documents, problems):
    """What the Courier setup relies on, beyond the API's own rules."""
    config_maps = {d["metadata"]["name"] for d in documents if d.get("kind") == "ConfigMap"}
    secrets = {d["metadata"]["name"] for d in documents if d.get("kind") == "Secret"}
    claims = {d["metadata"]["name"] for d in documents if d.get("kind") == "PersistentVolumeClaim"}
    for document in documents:
        if document.get("kind") != "CronJob":
            continue
        name = document["metadata"]["name"]
        spec = document["spec"]
        if spec.get("concurrencyPolicy") != "Forbid":
            problems.append(f"CronJob {name}: concurrencyPolicy must be Forbid")
        job = spec["jobTemplate"]["spec"]
        if job.get("completionMode") != "Indexed":
            problems.append(f"CronJob {name}: completionMode must be Indexed (one shard per index)")
        pod = job["template"]["spec"]
        if pod.get("restartPolicy") not in ("Never", "OnFailure"):
            problems.append(f"CronJob {name}: a Job's pods need restartPolicy Never or OnFailure")
        for container in pod["containers"]:
            env = {e["name"]: e for e in container.get("env", [])}
            completions = env.get("JOB_COMPLETIONS", {}).get("value")
            if completions != str(job.get("completions")):
                problems.append(
                    f"CronJob {name}: JOB_COMPLETIONS ({completions}) must equal completions "
                    f"({job.get('completions')}), or shards would be missed")
            for variable in env.values():
                ref = variable.get("valueFrom", {}).get("secretKeyRef")
                if ref and ref.get("name") not in secrets:
                    problems.append(f"CronJob {name}: secret {ref.get('name')} is not defined")
            if container.get("args", [None])[0] != "run":
                problems.append(f"CronJob {name}: the container must run `courier run`")
            problems += once_per_problems(name, container.get("args", []), env)
        for volume in pod.get("volumes", []):
            if "configMap" in volume and volume["configMap"]["name"] not in config_maps:
                problems.append(f"CronJob {name}: ConfigMap {volume['configMap']['name']} is not defined")
            claim = volume.get("persistentVolumeClaim", {}).get("claimName")
            if claim and claim not in claims:
                problems.append(f"CronJob {name}: PersistentVolumeClaim {claim} is not defined")


def once_per_problems(name, args, env):
    """Each night's Job runs its shards afresh, and a retried pod completes its own Job's run:
    `--once-per $(VAR)`, VAR the Job's name from its pods' label. `--resume` resumed the
    first night's history every night after, and fetched nothing (trial BB)."""
    if "--resume" in args:
        return [f"CronJob {name}: --resume resumes the first night's history every night; "
                "use --once-per $(VAR), VAR the Job's name"]
    if "--once-per" not in args or args.index("--once-per") + 1 >= len(args):
        return [f"CronJob {name}: a CronJob's pods need --once-per with the Job's name"]
    value = args[args.index("--once-per") + 1]
    variable = value[2:-1] if value.startswith("$(") and value.endswith(")") else None
    field = env.get(variable, {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
    if field != "metadata.labels['batch.kubernetes.io/job-name']":
        return [f"CronJob {name}: --once-per {value} must name an env variable set from the "
                "pod's batch.kubernetes.io/job-name label"]
    return []


def dockerfile_problems(path):
    """The image the CronJob runs: two stages, the runtime on the Swift slim image with
    libcurl, the binary copied from the build stage, not run as root."""
    lines = [line.strip() for line in open(path, encoding="utf-8") if line.strip()
             and not line.lstrip().startswith("#")]
    stages = [line for line in lines if line.upper().startswith("FROM ")]
    problems = []
    if len(stages) != 2:
        problems.append(f"{path}: expected two stages (build, runtime), found {len(stages)}")
        return problems
    if " AS " not in stages[0].upper():
        problems.append(f"{path}: the build stage needs a name")
    if not stages[1].split()[1].startswith("swift:") or "slim" not in stages[1]:
        problems.append(f"{path}: the runtime stage must be a Swift slim image")
    text = "\n".join(lines)
    if "libcurl4 " not in text and "libcurl4\n" not in text:
        problems.append(f"{path}: the runtime stage must install libcurl4")
    if "COPY --from=" not in text:
        problems.append(f"{path}: the binary must come from the build stage")
    if not any(line.upper().startswith("USER ") for line in lines):
        problems.append(f"{path}: the image must not run as root")
    return problems


def load(folder):
    import glob
    import os
    documents = []
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        with open(path, encoding="utf-8") as handle:
            for document in yaml.safe_load_all(handle):
                if document is not None:
                    documents.append((os.path.basename(path), document))
    return documents


def validate(documents):
    problems = []
    for file, document in documents:
        key = (document.get("apiVersion"), document.get("kind"))
        if key not in KINDS:
            problems.append(f"{file}: unknown apiVersion/kind {key}")
            continue
        check(document, key[1], f"{file}:{key[1]}", problems)
        if not (document.get("metadata") or {}).get("name"):
            problems.append(f"{file}: {key[1]} needs metadata.name")
    if not problems:
        courier_rules([d for _, d in documents], problems)
    return problems


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    documents = load(args[0])
    if not documents:
        print(f"{args[0]}: no manifests", file=sys.stderr)
        return 1
    problems = validate(documents)
    if "--dockerfile" in args:
        problems += dockerfile_problems(args[args.index("--dockerfile") + 1])
    for problem in problems:
        print(problem)
    if "--extract-job" in args and not problems:
        target = args[args.index("--extract-job") + 1]
        config = next(d for _, d in documents if d.get("kind") == "ConfigMap")
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(config["data"]["job.json"])
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
