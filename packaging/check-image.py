#!/usr/bin/env python3
"""Checks courier's OCI image archive (make image) without starting a container.

    packaging/check-image.py ARCHIVE      (as root: chroot and the image's uid 65532)

It reads the archive as the OCI layout it is (index, manifest, config, layer), unpacks the
layer into a scratch folder, checks the config (entrypoint /usr/bin/courier, user 65532,
workdir /data) and the tree (no shell, apt or dpkg; the CA bundle), then runs the image's
courier in that tree with chroot as user 65532: --version, and a job against the fixture
server on loopback (the chroot shares this machine's network), whose saved answer and log
it reads back. It prints what it measured; any failure exits 1 with the reason.
"""

import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USER = "65532:65532"  # the same in SETUP below


def fail(message):
    sys.exit(f"check-image: {message}")


def blob(layout, digest):
    """A blob's bytes, its sha256 checked against its name."""
    algorithm, value = digest.split(":")
    with open(os.path.join(layout, "blobs", algorithm, value), "rb") as file:
        data = file.read()
    if hashlib.sha256(data).hexdigest() != value:
        fail(f"blob {digest} does not match its digest")
    return data


# What a container runtime gives a container and a chroot lacks, made in a mount and process
# namespace of its own (nothing shows on this machine): /proc, without which the Swift runtime,
# reading the arguments from /proc/self/cmdline, sees none (courier prints its usage, exits 2),
# and /dev's usual devices, without which UUID() is all zeros (so is every run id).
SETUP = """set -e
root=$1; shift
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=755 tmpfs "$root/dev"
for device in null zero full random urandom; do
    touch "$root/dev/$device"
    mount --bind "/dev/$device" "$root/dev/$device"
done
exec chroot --userspec=65532:65532 "$root" /usr/bin/courier "$@"
"""


def courier(root, *arguments):
    """Runs the image's /usr/bin/courier in ROOT as 65532, with an empty environment."""
    return subprocess.run(
        [shutil.which("unshare"), "--mount", "--pid", "--fork", "/bin/sh", "-c", SETUP,
         "sh", root, *arguments],
        env={"PATH": "/usr/sbin:/usr/bin"}, capture_output=True, text=True, timeout=300)


def main():
    if len(sys.argv) != 2:
        fail("usage: packaging/check-image.py ARCHIVE")
    archive = sys.argv[1]
    if not os.path.isfile(archive):
        fail(f"{archive}: no such archive (make image makes it)")
    if os.geteuid() != 0:
        fail("needs root (chroot, and files owned by 65532)")
    scratch = tempfile.mkdtemp(prefix="courier-image-")
    server = None
    try:
        layout = os.path.join(scratch, "layout")
        with tarfile.open(archive) as tar:
            tar.extractall(layout, filter="fully_trusted")
        with open(os.path.join(layout, "index.json"), encoding="utf-8") as file:
            index = json.load(file)
        manifest = json.loads(blob(layout, index["manifests"][0]["digest"]))
        config = json.loads(blob(layout, manifest["config"]["digest"]))
        settings = config["config"]
        checks = {
            "Entrypoint": (settings.get("Entrypoint"), ["/usr/bin/courier"]),
            "User": (settings.get("User"), USER),
            "WorkingDir": (settings.get("WorkingDir"), "/data"),
            "os/architecture": (f"{config['os']}/{config['architecture']}",
                                "linux/" + {"x86_64": "amd64", "aarch64": "arm64"}
                                .get(os.uname().machine, os.uname().machine)),
        }
        for name, (found, wanted) in checks.items():
            if found != wanted:
                fail(f"config {name} is {found!r}, not {wanted!r}")
        if len(manifest["layers"]) != 1:
            fail(f"{len(manifest['layers'])} layers, not 1")

        layer = manifest["layers"][0]
        data = blob(layout, layer["digest"])
        if layer["mediaType"].endswith("gzip"):
            data = gzip.decompress(data)
        # The config names the uncompressed layer too: the two must agree.
        if config["rootfs"]["diff_ids"] != ["sha256:" + hashlib.sha256(data).hexdigest()]:
            fail("the layer's diff_id does not match the config")
        root = os.path.join(scratch, "root")
        os.mkdir(root)
        # tar itself, not tarfile: owners as numbers, devices and links as the image has them.
        subprocess.run(["tar", "-C", root, "-x", "--numeric-owner", "--same-owner", "-p"],
                       input=data, check=True)

        for absent in ("bin/sh", "usr/bin/dash", "usr/bin/bash", "usr/bin/apt", "usr/bin/dpkg"):
            if os.path.lexists(os.path.join(root, absent)):
                fail(f"/{absent} is in the image")
        bundle = os.path.join(root, "etc/ssl/certs/ca-certificates.crt")
        if not os.path.isfile(bundle) or os.path.getsize(bundle) < 100_000:
            fail("no CA bundle at /etc/ssl/certs/ca-certificates.crt")
        if os.stat(os.path.join(root, "data")).st_uid != 65532:
            fail("/data is not 65532's")
        with open(os.path.join(root, "var/lib/dpkg/status"), encoding="utf-8") as status:
            packages = [line.split()[1] for line in status if line.startswith("Package: ")]

        version = courier(root, "--version")
        if version.returncode != 0 or not version.stdout.startswith("courier "):
            fail(f"courier --version: {version.returncode} {version.stdout}{version.stderr}")

        server = subprocess.Popen(
            [sys.executable, os.path.join(REPO, "Tests/Fixtures/fixture_server.py"),
             "--no-stdin"], stdout=subprocess.PIPE, text=True)
        ready = server.stdout.readline().split()
        if not ready or ready[0] != "READY":
            fail(f"the fixture server did not start: {ready}")
        port = ready[1]
        job = {
            "version": 1, "name": "image-check", "baseURL": f"http://127.0.0.1:{port}",
            "tasks": [
                {"id": "echo", "path": "/echo", "query": {"from": "image"},
                 "save": "echo.json", "expect": {"status": [200]}},
                {"id": "flaky", "path": "/flaky", "query": {"key": "image-check", "fail": "1"},
                 "expect": {"json": {"/ok": True}}},
            ],
        }
        with open(os.path.join(root, "data/job.json"), "w", encoding="utf-8") as file:
            json.dump(job, file)
        run = courier(root, "run", "/data/job.json", "--no-progress")
        if run.returncode != 0:
            fail(f"courier run exited {run.returncode}: {run.stdout}{run.stderr}")
        with open(os.path.join(root, "data/out/image-check/echo.json"), encoding="utf-8") as saved:
            echoed = json.load(saved)
        if echoed.get("query") != "from=image":
            fail(f"the saved answer is not the server's echo: {echoed}")
        logs = os.listdir(os.path.join(root, "data/logs/image-check"))
        if not any(name.endswith(".jsonl") for name in logs):
            fail(f"no log in /data/logs/image-check: {logs}")
        if any("-00000000" in name for name in logs):
            fail(f"the run id is all zeros (no /dev/urandom?): {logs}")

        tree_bytes = sum(os.lstat(os.path.join(d, f)).st_size
                         for d, _, fs in os.walk(root) for f in fs)
        print(f"config: entrypoint {settings['Entrypoint']}, user {settings['User']}, "
              f"workdir {settings['WorkingDir']}")
        print(f"archive {os.path.getsize(archive) / 1e6:.1f} MB; layer {layer['size'] / 1e6:.1f} MB "
              f"compressed, tree {tree_bytes / 1e6:.1f} MB; {len(packages)} packages: "
              f"{' '.join(packages)}")
        print("courier --version: " + version.stdout.splitlines()[0])
        print("courier run: " + (run.stdout + run.stderr).strip().splitlines()[-1])
        print("check-image: the image is good")
    finally:
        if server:
            server.kill()
            server.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
