#!/usr/bin/env bash
# Builds the release tarball of this machine's architecture, as the release job does:
#   packaging/release.sh [--deb] [OUT_DIR]      (default OUT_DIR: $CARGO_TARGET_DIR/release-dist)
# writes OUT_DIR/reseam-linux-ARCH.tar.gz (ARCH: x64 or arm64) and its .sha256, and with --deb
# also the .deb (cargo deb, from the same binary). The tarball holds one folder:
#   reseam  man/man1/*.1  completions/  systemd/reseam.service systemd/reseam.env
#   README.md  LICENSE-MIT  LICENSE-APACHE  NOTICE  SHA256SUMS (of every other file)
# It is reproducible: file times are the last commit's, owners 0, names sorted, gzip without a name.
set -euo pipefail
cd "$(dirname "$0")/.."

deb=0
if [ "${1:-}" = --deb ]; then deb=1; shift; fi
target_dir=${CARGO_TARGET_DIR:-target}
out=${1:-$target_dir/release-dist}

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "release.sh: no release name for $(uname -m)" >&2; exit 1 ;;
esac
name=reseam-linux-$arch

cargo build --locked --profile dist --bin reseam
binary=$target_dir/dist/reseam

stage=$out/$name
rm -rf "$stage" "$out/$name.tar.gz" "$out/$name.tar.gz.sha256"
mkdir -p "$stage/man/man1" "$stage/completions" "$stage/systemd"
install -m 0755 "$binary" "$stage/reseam"
install -m 0644 man/*.1 "$stage/man/man1/"
install -m 0644 completions/* "$stage/completions/"
install -m 0644 packaging/systemd/reseam.service packaging/systemd/reseam.env "$stage/systemd/"
install -m 0644 README.md LICENSE-MIT LICENSE-APACHE NOTICE "$stage/"
sums=$(cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs sha256sum)
printf '%s\n' "$sums" > "$stage/SHA256SUMS"

epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$out" -cf - "$name" \
  | gzip -n -9 > "$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
rm -rf "$stage"
echo "$out/$name.tar.gz"

if [ "$deb" = 1 ]; then
  command -v cargo-deb >/dev/null || { echo "release.sh: --deb needs cargo-deb (cargo install --locked cargo-deb)" >&2; exit 1; }
  # RESEAM_DEB_FAST=1 (packaging/test.sh): quicker, larger compression of the same files.
  fast=()
  [ "${RESEAM_DEB_FAST:-0}" = 1 ] && fast=(--fast)
  cargo deb --no-build --profile dist --output "$out/" "${fast[@]}"
fi
