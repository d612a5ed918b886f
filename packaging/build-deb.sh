#!/usr/bin/env bash
# Builds courier_<version>_<arch>.deb from a built courier binary: the binary (stripped), its
# manual page and completion scripts (made by the binary itself), the units of deploy/systemd
# pointed at /usr/bin/courier, the cron file as an example (never live: nothing runs by
# surprise), the control files of packaging/debian, and Depends: from the libraries the binary
# really links (dpkg-shlibdeps).
#
#   packaging/build-deb.sh [--allow-unpackaged-libraries] BINARY OUT_DIR
#
# `make deb` passes the static release build (.build-static/release/courier). The package test
# passes the debug build, which needs the Swift runtime of the toolchain, a library no Debian
# package holds: --allow-unpackaged-libraries lets such a binary through (its package is for
# tests only). The last line printed is the .deb's path.
#
# Environment: DEB_REVISION (1), DEB_MAINTAINER, SOURCE_DATE_EPOCH (the commit's time: the
# changelog's date and the files' times, so the same commit gives the same package).
set -euo pipefail

die() { echo "build-deb: $*" >&2; exit 1; }

allow_unpackaged=
if [ "${1:-}" = --allow-unpackaged-libraries ]; then allow_unpackaged=1; shift; fi
[ $# -eq 2 ] || die "usage: packaging/build-deb.sh [--allow-unpackaged-libraries] BINARY OUT_DIR"
binary=$1
out=$2
[ -x "$binary" ] || die "$binary is not an executable (build it first: make deb does)"
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (make deb installs dpkg-dev)"
done

repo=$(cd "$(dirname "$0")/.." && pwd)
here=$repo/packaging

# "courier 0.1.0" then "commit 1234abcd…": the package is the version the binary says it is.
version_text=$("$binary" --version) || die "$binary --version failed"
upstream=$(sed -n '1s/^courier \([0-9][0-9A-Za-z.+~]*\)$/\1/p' <<<"$version_text")
[ -n "$upstream" ] || die "cannot read a version from '$binary --version': $(head -n1 <<<"$version_text")"
commit=$(sed -n 's/^commit //p' <<<"$version_text")
# A Debian revision makes this a non-native package: upstream's CHANGELOG.md is changelog.gz,
# the packaging's own is changelog.Debian.gz.
version=$upstream-${DEB_REVISION:-1}
arch=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-Courier maintainers <courier@example.org>}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
    SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

umask 022
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
install -d "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" \
    "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
    "$root/usr/share/fish/vendor_completions.d" "$root/usr/lib/systemd/system" \
    "$root/usr/share/doc/courier/examples"

# As dh_strip does: symbols, .comment and .note go; the Swift metadata sections stay (they
# are loaded).
install -m 755 "$binary" "$root/usr/bin/courier"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/courier"
courier=$root/usr/bin/courier

"$courier" man | gzip -9n >"$root/usr/share/man/man1/courier.1.gz"
"$courier" completions bash >"$root/usr/share/bash-completion/completions/courier"
"$courier" completions zsh >"$root/usr/share/zsh/vendor-completions/_courier"
"$courier" completions fish >"$root/usr/share/fish/vendor_completions.d/courier.fish"

# deploy/systemd's units name /usr/local/bin/courier, where `make install` puts it (and
# DeployFilesTests replaces that path); the package's binary is /usr/bin/courier.
for unit in "$repo"/deploy/systemd/*; do
    sed 's|/usr/local/bin/courier|/usr/bin/courier|g' "$unit" \
        >"$root/usr/lib/systemd/system/$(basename "$unit")"
done
grep -q '^ExecStart=/usr/bin/courier run ' "$root/usr/lib/systemd/system/courier@.service" \
    || die "courier@.service's ExecStart does not run /usr/bin/courier after the rewrite"
install -m 644 "$repo/deploy/cron/courier.cron" "$root/usr/share/doc/courier/examples/"

install -m 644 "$here/debian/copyright" "$root/usr/share/doc/courier/copyright"
install -D -m 644 "$here/debian/lintian-overrides" "$root/usr/share/lintian/overrides/courier"
gzip -9n <"$repo/CHANGELOG.md" >"$root/usr/share/doc/courier/changelog.gz"
cat >"$stage/changelog.Debian" <<EOF
courier ($version) unstable; urgency=medium

  * courier $upstream, built from commit ${commit:-unknown}.
  * changelog.gz is upstream's CHANGELOG.md.

 -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")
EOF
gzip -9n <"$stage/changelog.Debian" >"$root/usr/share/doc/courier/changelog.Debian.gz"

# dpkg-shlibdeps wants a source package's debian/control where it runs; this one is enough.
install -d "$stage/src/debian"
printf 'Source: courier\n\nPackage: courier\nArchitecture: any\n' >"$stage/src/debian/control"
if ! shlibs=$(cd "$stage/src" && dpkg-shlibdeps -O ${allow_unpackaged:+--ignore-missing-info} \
    -e"$courier" 2>"$stage/shlibdeps.err"); then
    cat "$stage/shlibdeps.err" >&2
    die "the binary links a library no Debian package provides (above); build it with
  --static-swift-stdlib, as make deb does"
fi
# Its warnings (a library linked but unused) are worth seeing, never fatal; with unpackaged
# libraries allowed, it warns about each of those, as expected.
[ -n "$allow_unpackaged" ] || grep -v '^$' "$stage/shlibdeps.err" >&2 || true
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibs")
[ -n "$depends" ] || die "dpkg-shlibdeps found no libraries: $shlibs"
# passwd: postinst's useradd.
depends="$depends, passwd"

sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@DEPENDS@|$depends|" -e "s|@INSTALLED_SIZE@|$(du -sk "$root" | cut -f1)|" \
    "$here/debian/control.in" >"$root/DEBIAN/control"
install -m 755 "$here/debian/postinst" "$here/debian/postrm" "$root/DEBIAN/"
(cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"

# Every file's time is the commit's, so two builds of one commit give the same bytes.
find "$root" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch -h -d "@$SOURCE_DATE_EPOCH"
mkdir -p "$out"
deb=$out/courier_${version}_$arch.deb
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$root" "$deb" >/dev/null
echo "$deb"
