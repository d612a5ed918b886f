#!/usr/bin/env bash
# Builds courier's OCI image archive from Debian packages, without a container engine's build:
#
#   packaging/build-image.sh DEB OUT_DIR      (as root; `make image` passes make deb's package)
#
# 1. mmdebstrap makes a bookworm root file system (minbase) with the package installed, so
#    apt resolves its Depends: the package's own dependencies are what the image runs on. The
#    courier user is made with uid 65532 first (the Kubernetes manifests run as 65532), and
#    the package's postinst keeps it.
# 2. packaging/image-tree.py copies out only courier and what it needs to run: the closure
#    of its Depends (but passwd, for postinst only) and the CA certificates. No shell, apt or
#    dpkg; a dpkg status of just those packages, for image scanners.
# 3. podman imports that tree as a one-layer image (entrypoint, user, workdir) and saves it
#    as OUT_DIR/courier-<version>.oci.tar. Its storage and state are folders of this build,
#    removed after: the machine's own podman images are left alone (only podman's blob cache,
#    /var/lib/containers/cache, is written).
#
# IMAGE_MIRROR changes the Debian mirror (http://deb.debian.org/debian); IMAGE_SECURITY its
# security one (http://deb.debian.org/debian-security): bookworm's updates are in the image.
set -euo pipefail

die() { echo "build-image: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: packaging/build-image.sh DEB OUT_DIR"
deb=$(realpath "$1")
out=$2
[ -f "$deb" ] || die "$1: no such package (make deb makes it)"
[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap's root mode, and files owned by 65532)"
for tool in mmdebstrap podman python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (make image installs it)"
done
here=$(cd "$(dirname "$0")" && pwd)
version=$(dpkg-deb -f "$deb" Version)
upstream=${version%-*}
mirror=${IMAGE_MIRROR:-http://deb.debian.org/debian}
security=${IMAGE_SECURITY:-http://deb.debian.org/debian-security}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# Documentation, manual pages and translations never reach the image; copyright files do.
# The essential hook runs before the package is installed: base-passwd's files exist, useradd
# (passwd) not yet, so the user is written in by hand (passwd's postinst adds its shadow line).
# The automount hook lets the chrooted dpkg see the package's file (--include of a path).
# shellcheck disable=SC2016  # the hooks' $1 is mmdebstrap's: the root it is making
mmdebstrap --variant=minbase --include="ca-certificates,$deb" \
    --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --essential-hook='echo "courier:x:65532:65532:courier jobs:/var/lib/courier:/usr/sbin/nologin" >>"$1/etc/passwd"' \
    --essential-hook='echo "courier:x:65532:" >>"$1/etc/group"' \
    bookworm "$stage/full" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb $security bookworm-security main"

python3 "$here/image-tree.py" "$stage/full" "$stage/tree"

mkdir -p "$out"
rm -f "$out"/courier-*.oci.tar
archive=$out/courier-$upstream.oci.tar
podman=(podman --root "$stage/storage" --runroot "$stage/run" --tmpdir "$stage/tmp" --storage-driver vfs)
# --numeric-owner: the tree's owners are the image's uids (65532), whatever this machine calls them.
tar -C "$stage/tree" --numeric-owner -c . | "${podman[@]}" import \
    --change 'ENTRYPOINT ["/usr/bin/courier"]' --change 'CMD ["--help"]' \
    --change 'USER 65532:65532' --change 'WORKDIR /data' \
    --message "courier $version from Debian bookworm packages (packaging/build-image.sh)" \
    - "localhost/courier:$upstream" >/dev/null
"${podman[@]}" save --format oci-archive -o "$archive" "localhost/courier:$upstream"
echo "$archive"
