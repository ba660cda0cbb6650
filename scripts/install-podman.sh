#!/usr/bin/env bash
# Makes podman able to build and run the image here, for deploy's TestImage
# and TestComposeUp. Used by .ci/run; needs root (or sudo) and Debian's
# packages, not a container registry:
#
#   - installs podman, podman-compose and debootstrap from the distribution,
#     when missing;
#   - builds the Dockerfile's base images locally, since no registry may be
#     reachable: the runtime base with debootstrap --variant=minbase (the
#     suite of the Dockerfile's ARG DEBIAN), and the Go builder base as that
#     plus git, CA certificates and this machine's Go toolchain;
#   - when podman cannot start a container with its defaults, writes a
#     containers.conf drop-in with what this machine needs (see below).
#
# Everything is cached under the user's cache dir and in podman's storage: a
# second run only checks. It prints the build arguments for TestImage:
#
#   KILROY_IMAGE_BUILD_BASE=localhost/kilroy-ci/golang:go1.26.8-bookworm
#   KILROY_IMAGE_RUNTIME_BASE=localhost/kilroy-ci/debian:bookworm-slim
#   KILROY_POSTGRES_IMAGE=localhost/kilroy-ci/postgres:bookworm
#
# so .ci/run exports them. The Dockerfile itself is built unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/kilroy-bot/image}"
say() { echo "install-podman: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  say "needs root: podman builds the image as root here, and debootstrap needs root"
  exit 1
fi
if ! command -v podman >/dev/null || ! command -v podman-compose >/dev/null || ! command -v debootstrap >/dev/null; then
  command -v apt-get >/dev/null || { say "no apt-get: install podman, podman-compose and debootstrap yourself"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends podman podman-compose debootstrap >/dev/null
fi
# Compose services find each other by name (the bot reaches "postgres")
# only where podman's network has DNS: with the CNI backend (Debian 12's
# podman), that is the dnsname plugin.
if [ "$(podman info --format '{{.Host.NetworkBackend}}' 2>/dev/null)" = cni ] && [ ! -x /usr/lib/cni/dnsname ]; then
  command -v apt-get >/dev/null || { say "no apt-get: install the CNI dnsname plugin yourself"; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends golang-github-containernetworking-plugin-dnsname >/dev/null
fi

suite="$(sed -n 's/^ARG DEBIAN=//p' Dockerfile)"
[ -n "$suite" ] || { say "the Dockerfile has no ARG DEBIAN=SUITE"; exit 1; }
gover="$(go env GOVERSION)"
runtime_img="localhost/kilroy-ci/debian:${suite}-slim"
build_img="localhost/kilroy-ci/golang:${gover}-${suite}"
mkdir -p "$cache"

# The runtime base: what debian:SUITE-slim holds, near enough (minbase
# without apt lists, package caches, documentation and locales).
if ! podman image exists "$runtime_img"; then
  tarball="$cache/debian-${suite}-slim.tar"
  if [ ! -s "$tarball" ]; then
    tmp="$(mktemp -d "$cache/rootfs.XXXXXX")"
    trap 'rm -rf "$tmp"' EXIT
    say "debootstrap --variant=minbase $suite (about 30 seconds)"
    debootstrap --variant=minbase "$suite" "$tmp/rootfs" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
    rm -rf "$tmp"/rootfs/var/lib/apt/lists/* "$tmp"/rootfs/var/cache/apt/*.bin \
      "$tmp"/rootfs/var/cache/apt/archives/*.deb "$tmp"/rootfs/usr/share/doc/* \
      "$tmp"/rootfs/usr/share/man/* "$tmp"/rootfs/usr/share/info/*
    tar -C "$tmp/rootfs" --numeric-owner -cf "$tarball.part" .
    mv "$tarball.part" "$tarball"
    rm -rf "$tmp"
    trap - EXIT
  fi
  podman import -q --change 'CMD ["bash"]' "$tarball" "$runtime_img" >/dev/null
fi

# Can podman start a container at all? Two things stop it on some machines:
#   - crun refuses a cgroup v1 "hybrid" host whose cgroup v2 hierarchy has
#     controllers ("cgroups in hybrid mode not supported"); runc does not;
#   - a rootful container asks for 1048576 open files and processes, which
#     root cannot grant without CAP_SYS_RESOURCE ("setrlimit ... Operation
#     not permitted"); the drop-in asks for what this shell has, at most
#     16384 processes (podman itself runs with fewer than the shell here).
dropin=/etc/containers/containers.conf.d/50-kilroy-ci.conf
probe() { podman run --rm --network none "$runtime_img" true 2>&1; }
write_dropin() { # [runc]
  local nofile nproc
  nofile="$(ulimit -Hn)"
  nproc="$(ulimit -Hu)"
  if [ "$nproc" = unlimited ] || [ "$nproc" -gt 16384 ]; then nproc=16384; fi
  if [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; then nofile=65536; fi
  mkdir -p "$(dirname "$dropin")"
  {
    echo "# Written by kilroy-bot's scripts/install-podman.sh: podman could not start a container here."
    echo "[containers]"
    echo "default_ulimits = [\"nofile=$nofile:$nofile\", \"nproc=$nproc:$nproc\"]"
    if [ "${1:-}" = runc ]; then
      echo "[engine]"
      echo "runtime = \"runc\""
    fi
  } >"$dropin"
}
if ! out="$(probe)"; then
  say "podman cannot start a container with its defaults ($(echo "$out" | tail -1)); writing $dropin"
  write_dropin
  if ! out="$(probe)" && echo "$out" | grep -q "hybrid mode"; then
    say "crun refuses this cgroup hybrid host; using runc"
    command -v runc >/dev/null || apt-get install -y -qq --no-install-recommends runc >/dev/null
    write_dropin runc
    out="$(probe)" || true
  fi
  if ! probe >/dev/null; then
    say "podman still cannot start a container: $(echo "$out" | tail -1)"
    exit 1
  fi
fi

# The Go builder base: what golang:VERSION-SUITE holds for our build (Go at
# /usr/local/go, GOPATH /go, git for the version stamp, CA certificates
# with this machine's own, so that go mod download trusts what this machine
# trusts: an egress proxy's CA, say).
if ! podman image exists "$build_img"; then
  ctx="$(mktemp -d "$cache/build.XXXXXX")"
  trap 'rm -rf "$ctx"' EXIT
  cp -a "$(go env GOROOT)" "$ctx/go"
  mkdir "$ctx/ca"
  cp -a /usr/local/share/ca-certificates/. "$ctx/ca/" 2>/dev/null || true
  cat >"$ctx/Containerfile" <<EOF
FROM $runtime_img
COPY ca /usr/local/share/ca-certificates
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go
EOF
  say "building $build_img"
  podman build -q -t "$build_img" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
fi

# A Postgres image for the compose tests of compose.postgres.yml and
# compose.replicas.yml: the runtime base plus Debian's PostgreSQL, started
# by scripts/postgres-entrypoint.sh, which keeps the official image's
# contract (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, the data in
# /var/lib/postgresql/data, pg_isready for the health check), so the
# compose files run unchanged with it.
pg_img="localhost/kilroy-ci/postgres:${suite}"
if ! podman image exists "$pg_img"; then
  ctx="$(mktemp -d "$cache/build.XXXXXX")"
  trap 'rm -rf "$ctx"' EXIT
  cp scripts/postgres-entrypoint.sh "$ctx/entrypoint.sh"
  cat >"$ctx/Containerfile" <<EOF
FROM $runtime_img
RUN apt-get update && apt-get install -y --no-install-recommends postgresql \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
COPY entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PGDATA=/var/lib/postgresql/data
STOPSIGNAL SIGINT
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
EOF
  say "building $pg_img"
  podman build -q -t "$pg_img" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
fi
echo "KILROY_IMAGE_BUILD_BASE=$build_img"
echo "KILROY_IMAGE_RUNTIME_BASE=$runtime_img"
echo "KILROY_POSTGRES_IMAGE=$pg_img"
