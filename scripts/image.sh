#!/usr/bin/env bash
# image.sh: builds the extractbench container image offline, checks it, and
# runs `extractbench version` in it where this machine allows.
#
#   1. builds a static binary: cgo go-sqlite3 linked statically against glibc
#      (-linkmode external -extldflags -static), netgo/osusergo so no libc
#      resolver or NSS is called, sqlite_omit_load_extension so no dlopen;
#      then checks it is static: no ELF interpreter, no dynamic section;
#   2. lays out the context deploy/container/Containerfile copies (rootfs/);
#   3. `buildah build` FROM scratch: nothing is pulled, no RUN step;
#   4. inspects the image: entrypoint, user, size; fails if any is not as
#      the Containerfile says;
#   5. runs `extractbench version` in the image: `buildah run` first; where
#      this machine cannot start a container (no user namespaces, nested),
#      it says why and runs the binary chrooted into the image's own mounted
#      filesystem as user 65532 instead, which still proves the image needs
#      nothing but itself;
#   6. writes the image as an OCI archive, WORK/extractbench.oci.tar, for
#      skopeo copy or podman load (the buildah store here is vfs).
#
# Usage: scripts/image.sh   (IMAGE=ghcr.io/extractbench/extractbench TAG=latest WORK=DIR
#                            STORAGE_DRIVER=vfs; needs Debian's buildah, busybox-static,
#                            gcc and libc6-dev: apt-get install buildah busybox-static)
# Push it where your cluster pulls from:
#   buildah push ghcr.io/extractbench/extractbench:latest docker://REGISTRY/extractbench:latest
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
image=${IMAGE:-ghcr.io/extractbench/extractbench}
tag=${TAG:-latest}
work=${WORK:-$(mktemp -d /tmp/extractbench-image.XXXXXX)}
driver=${STORAGE_DRIVER:-vfs}   # vfs works nested and unprivileged; overlay is faster where it works
buildah=(buildah --storage-driver "$driver")
uid=65532
max_mb=${MAX_MB:-80}            # the image is the binary, busybox and certificates

say() { printf 'image.sh: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
for c in buildah go gcc readelf; do command -v "$c" >/dev/null || die "$c not found (apt-get install buildah gcc libc6-dev binutils)"; done
[ -x /bin/busybox ] || die "/bin/busybox not found (apt-get install busybox-static)"

# 1. the static binary
root=$work/rootfs
rm -rf "$root"
rm -rf "$work/userdir"
mkdir -p "$root/usr/local/bin" "$root/bin" "$root/etc/ssl/certs" "$root/tmp" "$work/userdir"
bin=$root/usr/local/bin/extractbench
say "building the static binary (a cold build compiles SQLite's C: minutes)"
commit=${COMMIT:-$(scripts/commit.sh)}   # linked in: the build context has no .git to stamp
CGO_ENABLED=1 go build -trimpath \
  -tags osusergo,netgo,sqlite_omit_load_extension \
  -ldflags "-s -w -X main.commit=$commit -linkmode external -extldflags -static" \
  -o "$bin" ./cmd/extractbench
"$bin" version | grep -qF "($commit)" || die "$bin version does not name commit $commit"
if readelf -lW "$bin" | grep -q 'INTERP'; then die "$bin asks for an ELF interpreter: not static"; fi
if readelf -dW "$bin" | grep -q 'NEEDED'; then die "$bin needs shared libraries: not static"; fi
say "static: $(file -b "$bin" | cut -d, -f1-4)"
file -b /bin/busybox | grep -q 'statically linked' || die "/bin/busybox is not static"

# 2. the context
cp /bin/busybox "$root/bin/sh"
printf 'root:x:0:0:root:/root:/sbin/nologin\nextractbench:x:%d:%d:extractbench:/home/extractbench:/sbin/nologin\n' $uid $uid >"$root/etc/passwd"
printf 'root:x:0:\nextractbench:x:%d:\n' $uid >"$root/etc/group"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/" 2>/dev/null || say "no /etc/ssl/certs/ca-certificates.crt here: the image trusts no https engine"
chmod 1777 "$root/tmp"

# 3. the image
ref=$image:$tag
"${buildah[@]}" build --pull=never --layers=false -f deploy/container/Containerfile -t "$ref" "$work" >&2
version=$("$bin" version | awk '{print $2}')
"${buildah[@]}" tag "$ref" "$image:$version"

# 4. inspect
entry=$("${buildah[@]}" inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$ref")
user=$("${buildah[@]}" inspect --type image --format '{{.OCIv1.Config.User}}' "$ref")
bytes=$("${buildah[@]}" images --noheading --format '{{.Size}}' "$ref")
[ "$entry" = '[/usr/local/bin/extractbench]' ] || die "entrypoint is $entry"
[ "$user" = "$uid:$uid" ] || die "user is $user, want $uid:$uid"
mnt_ctr=$("${buildah[@]}" from --pull-never "$ref")
trap '"${buildah[@]}" rm "$mnt_ctr" >/dev/null 2>&1 || true' EXIT
mnt=$("${buildah[@]}" mount "$mnt_ctr")
for d in /home/extractbench /work; do
  [ "$(stat -c %u:%g "$mnt$d")" = "$uid:$uid" ] || die "$d is owned by $(stat -c %u:%g "$mnt$d"), not the image's user"
done
[ "$(stat -c %a "$mnt/tmp")" = 1777 ] || die "/tmp is not 1777"
mb=$(du -sm "$mnt" | cut -f1)
[ "$mb" -le "$max_mb" ] || die "the image's filesystem is $mb MB, more than $max_mb"
say "image $ref (also $image:$version): entrypoint $entry, user $user, size $bytes ($mb MB unpacked)"
find "$mnt" -mindepth 1 -not -type d | sed "s|^$mnt||" | sort | sed 's/^/image.sh:   /' >&2

# 5. run `extractbench version` in it
if out=$("${buildah[@]}" run --isolation chroot --user $uid:$uid "$mnt_ctr" -- /usr/local/bin/extractbench version 2>"$work/run.err"); then
  say "buildah run: $out"
else
  say "buildah run could not start a container here: $(tail -1 "$work/run.err")"
  out=$(chroot --userspec=$uid:$uid "$mnt" /usr/local/bin/extractbench version) || die "the binary does not run chrooted in the image"
  say "chroot into the image's filesystem as $uid:$uid: $out"
fi
case $out in "extractbench $version "*) ;; *) die "version printed '$out'";; esac
# and it can write where it starts: init writes protocol.yaml into /work
"${buildah[@]}" run --isolation chroot --user $uid:$uid "$mnt_ctr" -- /usr/local/bin/extractbench init >/dev/null 2>"$work/run.err" \
  || chroot --userspec=$uid:$uid "$mnt" /bin/sh -c 'cd /work && /usr/local/bin/extractbench init' >/dev/null \
  || die "extractbench init cannot write /work as $uid"
say "extractbench init wrote /work/protocol.yaml as $uid:$uid"

# 6. a file any registry tool takes: skopeo copy oci-archive:FILE docker://..., podman load -i FILE
rm -f "$work/extractbench.oci.tar"
"${buildah[@]}" push --quiet "$ref" "oci-archive:$work/extractbench.oci.tar:$ref" >/dev/null
say "wrote $work/extractbench.oci.tar ($(du -m "$work/extractbench.oci.tar" | cut -f1) MB)"
echo "$ref"
