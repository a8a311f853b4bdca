# The sandbox image of the compose backend, and (target `runner`) the demo runner built on it.
#
# Built by `decathlon image build` with BuildKit, through the engine's API (decathlon/checkout/buildkit.py: this
# machine's docker CLI has no buildx), from a context it assembles outside the clone (decathlon/checkout/image.py):
#   tools/uv                   the pinned uv, the only installer here
#   wheels/<set>/              the wheelhouse's files of one pin set, and its requirements.txt: venv, runner,
#                              http-shim, server-<name> (decathlon/checkout/wheelhouse.py; the same bytes in every
#                              clone, so each stage below is keyed by its own pins and hits the cache from any clone)
#   ci/                        install_servers.py and its pins
#   src/                       the sandbox side of decathlon/ (sandbox, emulators, standins, tape, contract, errors),
#                              fixtures/
#   host/                      the host side of decathlon/ (backends, core, cli…: in the runner image only)
# Wheels, uv and pins are bind mounts of a step, never layers; uv's cache is a cache mount, kept between builds.
# Each real MCP server is a stage of its own and a layer of its own, so a change to one server's pins rebuilds
# that stage, nothing before; the sources come last, so an edit to them rebuilds no environment.
# `@SERVER@` blocks are repeated by image.py for each server in ci/servers/ (those that need a newer Python
# are the checkout image's).
# BASE_IMAGE: any Debian-like image with python3.11 (+venv); a public one for users who can pull,
# else the one `decathlon image build` bootstraps from Debian packages.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS base
# Bookworm's python is 3.11.2; a few pure-Python pins (soupsieve 4.1.2) declare >=3.11.5 without needing it:
# uv installs as for 3.11.7 (the host's, where the test suite runs them too).
# Bytecode compiled at install: every process here runs with PYTHONDONTWRITEBYTECODE, and would otherwise compile what
# it imports at each start.
ENV UV_NO_INDEX=1 UV_OFFLINE=1 UV_PYTHON_DOWNLOADS=never UV_LINK_MODE=copy UV_NO_PROGRESS=1 UV_COMPILE_BYTECODE=1 \
    UV_CACHE_DIR=/var/cache/uv DECATHLON_UV_PYTHON_VERSION=3.11.7

# The daemon's venv: the `sandbox` extra, pinned (requirements.txt is its closure under ci/constraints.txt).
FROM base AS venv
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/venv,target=/wheels \
    --mount=type=cache,id=decathlon-uv,target=/var/cache/uv \
    uv venv --quiet --python /usr/bin/python3 /opt/decathlon/venv \
 && uv pip install --quiet --python /opt/decathlon/venv/bin/python --find-links /wheels --no-deps \
      --python-version "$DECATHLON_UV_PYTHON_VERSION" -r /wheels/requirements.txt

# The runner's venv, a stage of its own: the sandbox extra and the host side's docker-py, rich and httpx.
FROM base AS runner-venv
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/runner,target=/wheels \
    --mount=type=cache,id=decathlon-uv,target=/var/cache/uv \
    uv venv --quiet --python /usr/bin/python3 /opt/decathlon/runner-venv \
 && uv pip install --quiet --python /opt/decathlon/runner-venv/bin/python --find-links /wheels --no-deps \
      --python-version "$DECATHLON_UV_PYTHON_VERSION" -r /wheels/requirements.txt

# The HTTP shim (vcrpy & co., a bare folder), by the host's own script.
FROM base AS server-_http
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/http-shim,target=/wheels \
    --mount=type=bind,source=ci/install_servers.py,target=/opt/decathlon/src/ci/install_servers.py \
    --mount=type=bind,source=ci/http-shim.txt,target=/opt/decathlon/src/ci/http-shim.txt \
    --mount=type=cache,id=decathlon-uv,target=/var/cache/uv \
    UV_FIND_LINKS=/wheels DECATHLON_SERVERS_DIR=/opt/decathlon/servers python3 /opt/decathlon/src/ci/install_servers.py _http

# @SERVER@ begin: one stage per real MCP server, its own venv by the host's own script (pins in ci/servers/@SERVER@.txt).
FROM base AS server-@SERVER@
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/server-@SERVER@,target=/wheels \
    --mount=type=bind,source=ci/install_servers.py,target=/opt/decathlon/src/ci/install_servers.py \
    --mount=type=bind,source=ci/servers/@SERVER@.txt,target=/opt/decathlon/src/ci/servers/@SERVER@.txt \
    --mount=type=cache,id=decathlon-uv,target=/var/cache/uv \
    UV_FIND_LINKS=/wheels DECATHLON_SERVERS_DIR=/opt/decathlon/servers python3 /opt/decathlon/src/ci/install_servers.py @SERVER@
# @SERVER@ end

FROM ${BASE_IMAGE} AS sandbox
# git: the git MCP server and some preprocess scripts need it; libfaketime: the frozen clock (the
# bootstrapped base has both already).
RUN (command -v git >/dev/null && ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1) \
 || (apt-get update && apt-get install -y --no-install-recommends git libfaketime && rm -rf /var/lib/apt/lists/*)
# agent (1500): the daemon, its MCP servers and the agent's python run as this unprivileged user.
# service (1501): the episode's mail, Canvas and WooCommerce, which the agent talks to: never the grader.
# grader (1502): preprocess and the evaluator, which alone read the task source (root:grader 0750).
# root only orchestrates (decathlon/sandbox/users.py); the backend drops every capability root does not need.
# No `safe.directory = *`: git trusts a repository its own user owns, and the grader's is defused first.
RUN groupadd -g 1500 agent && useradd -u 1500 -g agent -m -d /home/agent -s /bin/sh agent \
 && groupadd -g 1501 service && useradd -u 1501 -g service -M -d /nonexistent -s /usr/sbin/nologin service \
 && groupadd -g 1502 grader && useradd -u 1502 -g grader -M -d /nonexistent -s /usr/sbin/nologin grader
COPY --from=venv /opt/decathlon/venv /opt/decathlon/venv
# One layer per server, as built in its stage: a change to one server's pins rebuilds its stage and copies it
# and those after it again (seconds), nothing else. (Not hard-linked across servers: that saved ~270 MB, but
# made the servers one layer, rebuilt whole (a minute and more here) for any server's change; and on a
# fuse-overlayfs engine, opening hard-linked files is slower.)
COPY --from=server-_http /opt/decathlon/servers/_http /opt/decathlon/servers/_http
# @SERVER@ begin
COPY --from=server-@SERVER@ /opt/decathlon/servers/@SERVER@ /opt/decathlon/servers/@SERVER@
# @SERVER@ end
# After the environments: an edit to these rebuilds none of them.
COPY ci /opt/decathlon/src/ci
COPY src /opt/decathlon/src
# The project as a plain path entry (like the host's compat editable install), plus its task-api; its modules and
# the shim's sitecustomize compiled (every process here runs with PYTHONDONTWRITEBYTECODE). (The excel server's log beside its
# own package goes nowhere: ci/install_servers.py.) The fixtures (a prime sandbox's task source) are the
# grader's to read, never the agent's: they hold oracles and answers.
RUN echo /opt/decathlon/src > "$(echo /opt/decathlon/venv/lib/python3*/site-packages)/decathlon-src.pth" \
 && printf '#!/opt/decathlon/venv/bin/python\nfrom decathlon.sandbox.cli import main\nmain()\n' > /opt/decathlon/venv/bin/task-api \
 && chmod 0755 /opt/decathlon/venv/bin/task-api \
 && python3 -m compileall -q /opt/decathlon/src/decathlon \
 && chown -R root:grader /opt/decathlon/src/fixtures && chmod -R u=rwX,g=rX,o= /opt/decathlon/src/fixtures \
 && mkdir -p /episodes /run/decathlon && chmod 0755 /episodes && chown agent:agent /run/decathlon
ENV PATH=/opt/decathlon/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DECATHLON_SERVERS_DIR=/opt/decathlon/servers LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
    DECATHLON_SANDBOX_IMAGE=1
WORKDIR /episodes
CMD ["sleep", "infinity"]

FROM sandbox AS runner
COPY --from=runner-venv /opt/decathlon/runner-venv /opt/decathlon/runner-venv
COPY host /opt/decathlon/src
RUN echo /opt/decathlon/src > "$(echo /opt/decathlon/runner-venv/lib/python3*/site-packages)/decathlon-src.pth" \
 && printf '#!/opt/decathlon/runner-venv/bin/python\nfrom decathlon.cli.main import main\nmain()\n' > /opt/decathlon/runner-venv/bin/decathlon \
 && chmod 0755 /opt/decathlon/runner-venv/bin/decathlon
ENV PATH=/opt/decathlon/runner-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /opt/decathlon/src
ENTRYPOINT ["decathlon"]
CMD ["demo"]
