#!/usr/bin/env python3
"""Copies from a Debian root file system (FULL) into TREE only what courier needs to run.

    packaging/image-tree.py FULL TREE

Kept: the courier package and the closure of its Depends and Pre-Depends (passwd left out:
only postinst needs it), ca-certificates' files (not its Depends, openssl and debconf, which
only make the bundle), and base-files. Every file those packages list, as dpkg lists it, plus
what their maintainer scripts or mmdebstrap made: the merged /usr links, the users, the CA
bundle, the loader's cache, courier's home. TREE's dpkg status lists only the kept packages,
so that an image scanner reads the truth. Run as root: owners and modes are kept.
"""

import os
import shutil
import subprocess
import sys

# Packages kept without their own Depends, and Depends never followed.
ALONE = ["ca-certificates", "base-files"]
SKIPPED = {"passwd"}
# Files no package lists: made by mmdebstrap (the merged-/usr links), by maintainer scripts
# (users, CA links and bundle, the loader's cache, courier's home) or by libc-bin.
EXTRA = [
    "/bin", "/lib", "/lib64", "/sbin", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    "/etc/ld.so.cache", "/etc/ssl/certs", "/var/lib/courier",
]


def stanzas(status_path):
    """The dpkg status file as {package: stanza text}."""
    with open(status_path, encoding="utf-8") as status:
        blocks = status.read().strip().split("\n\n")
    result = {}
    for block in blocks:
        first = block.split("\n", 1)[0]
        assert first.startswith("Package: "), first
        result[first[len("Package: "):]] = block
    return result


def field(stanza, name):
    """A field's value, continuation lines joined."""
    value, inside = [], False
    for line in stanza.split("\n"):
        if line.startswith(name + ":"):
            value.append(line[len(name) + 1:].strip())
            inside = True
        elif inside and line.startswith(" "):
            value.append(line.strip())
        else:
            inside = False
    return " ".join(value)


def closure(status, roots):
    """The installed packages the roots depend on, roots included (first installed
    alternative of an "a | b")."""
    keep, todo = set(), list(roots)
    while todo:
        package = todo.pop()
        if package in keep or package in SKIPPED:
            continue
        keep.add(package)
        depends = field(status[package], "Pre-Depends") + "," + field(status[package], "Depends")
        for clause in filter(None, (c.strip() for c in depends.split(","))):
            names = [a.split()[0].split(":")[0] for a in clause.split("|")]
            installed = [n for n in names if n in status]
            if not installed:
                sys.exit(f"image-tree: {package} depends on {clause}, which is not installed")
            todo.append(installed[0])
    return keep


def inside(full, path):
    """PATH as it is in FULL: its folders' links (/lib -> usr/lib) resolved, the last part
    kept as it is (a link stays a link). None when it is not there."""
    parent = os.path.realpath(os.path.join(full, os.path.dirname(path).lstrip("/")))
    if not (parent + "/").startswith(os.path.realpath(full) + "/"):
        return None
    found = os.path.join(parent, os.path.basename(path))
    return os.path.relpath(found, full) if os.path.lexists(found) else None


def main():
    full, tree = sys.argv[1:3]
    admin = os.path.join(full, "var/lib/dpkg")
    status = stanzas(os.path.join(admin, "status"))
    keep = sorted(closure(status, ["courier"]) | set(ALONE))

    def info(package, suffix):
        """A package's file in dpkg's info folder: Multi-Arch: same ones are name:arch."""
        plain = os.path.join(admin, "info", package + suffix)
        arch = field(status[package], "Architecture")
        return plain if os.path.exists(plain) else os.path.join(
            admin, "info", f"{package}:{arch}{suffix}")

    paths = set()
    for package in keep:
        with open(info(package, ".list"), encoding="utf-8") as listed:
            for line in listed:
                if line.strip() not in ("", "/."):
                    paths.add(line.strip())
    paths.update(EXTRA)
    # /etc/ssl/certs and the home are folders whose whole content is wanted.
    for folder in ("/etc/ssl/certs", "/var/lib/courier"):
        for name in os.listdir(os.path.join(full, folder.lstrip("/"))):
            paths.add(folder + "/" + name)
    relative = sorted({r for r in (inside(full, p) for p in paths) if r})

    os.makedirs(tree)
    # Parents before children; links in place before the files under them.
    files = "\0".join(relative).encode() + b"\0"
    pack = subprocess.Popen(
        ["tar", "-C", full, "--no-recursion", "--null", "-T", "-", "-c"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    unpack = subprocess.Popen(
        ["tar", "-C", tree, "-x", "--keep-directory-symlink", "--same-owner", "-p"],
        stdin=pack.stdout)
    pack.stdout.close()
    pack.stdin.write(files)
    pack.stdin.close()
    if pack.wait() != 0 or unpack.wait() != 0:
        sys.exit("image-tree: copying the files failed")

    info_folder = os.path.join(tree, "var/lib/dpkg/info")
    os.makedirs(info_folder, exist_ok=True)
    with open(os.path.join(tree, "var/lib/dpkg/status"), "w", encoding="utf-8") as out:
        out.write("\n\n".join(status[p] for p in keep) + "\n")
    for package in keep:
        for suffix in (".list", ".md5sums"):
            source = info(package, suffix)
            if os.path.exists(source):
                shutil.copy2(source, info_folder)

    # Mount points and scratch space a runtime expects; /data is the workdir, courier's.
    for folder, mode in (("proc", 0o555), ("sys", 0o555), ("dev", 0o755), ("tmp", 0o1777),
                         ("data", 0o755)):
        os.makedirs(os.path.join(tree, folder), exist_ok=True)
        os.chmod(os.path.join(tree, folder), mode)
    os.chown(os.path.join(tree, "data"), 65532, 65532)
    print(f"image-tree: {len(keep)} packages: {' '.join(keep)}", file=sys.stderr)


if __name__ == "__main__":
    main()
