# kilroy-bot: the GitHub App server with its node sandbox.
#
#   docker build -t kilroy-bot .
#   docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
#     --security-opt systempaths=unconfined --device /dev/net/tun ... kilroy-bot
#
# The security options let bubblewrap create its namespaces (docs/serve.md,
# "Sandbox and threat model"); the tun device is pasta's, the way out of each
# run's network namespace (sandbox.network: public). No --privileged and no
# capabilities are needed.
# Toolchains and agent CLIs are not included: build an image FROM this one
# (docs/serve.md, "Run it in a container").

ARG GO_VERSION=1.26
ARG DEBIAN=bookworm
# The base images, public by default. Where no registry is reachable, pass
# local ones built from the same suite (scripts/install-podman.sh makes them
# for the image test): the Dockerfile is otherwise built as it is.
ARG BUILD_BASE=golang:${GO_VERSION}-${DEBIAN}
ARG RUNTIME_BASE=debian:${DEBIAN}-slim

FROM ${BUILD_BASE} AS build
WORKDIR /src
COPY go.mod go.sum ./
# Cache mounts keep modules and compiled packages between builds (BuildKit,
# podman): a rebuild compiles only what changed, not all of SQLite again.
RUN --mount=type=cache,target=/go/pkg/mod go mod download
# The whole checkout, .git included: the go command stamps the version and
# commit (kilroy-bot version, kilroy_build_info) from it. .dockerignore
# leaves out build output and deploy/.env, the operator's secrets.
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/kilroy-bot ./cmd/kilroy-bot \
 && /out/kilroy-bot version

FROM ${RUNTIME_BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bubblewrap passt util-linux ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 kilroy \
 && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/kilroy --shell /usr/sbin/nologin kilroy \
 && install -d -o kilroy -g kilroy -m 0700 /data
COPY --from=build /out/kilroy-bot /usr/local/bin/kilroy-bot
# Not root: the sandbox's process limit (RLIMIT_NPROC) holds only for a
# user other than root when the container gives no cgroup to delegate.
USER 10001:10001
WORKDIR /home/kilroy
ENV KILROY_LISTEN=:8080 \
    KILROY_DATA_DIR=/data
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["kilroy-bot", "healthcheck"]
# tini is PID 1: it reaps the orphans every jail leaves (bubblewrap's inner
# init exits after its parent, containers/bubblewrap#697), which the bot
# cannot, forwards signals to the bot and exits with its status. No -g: the
# bot stops its nodes' process groups itself, in order. -s keeps tini the
# reaper, without a warning, where the runtime puts an init of its own at
# PID 1 (docker run --init).
ENTRYPOINT ["tini", "-s", "--", "kilroy-bot"]
CMD ["serve"]
