# The sandbox image of the compose backend, and (target `runner`) the demo runner built on it.
#
# Built by `decathlon image build`, which assembles the build context (build/docker-context/):
#   wheels/        every wheel needed, built on the host (so `docker build --network none` works)
#   wheels/*.txt   sandbox.txt, runner.txt (what to install) and constraints.txt (exact pins)
#   src/           the sandbox side of decathlon/ (sandbox, emulators, standins, tape, contract, errors),
#                  ci/ (install_servers.py and its pins), fixtures/
#   host/          the host side of decathlon/ (backends, core, cli…: in the runner image only)
# BASE_IMAGE: any Debian-like image with python3.11 (+venv); a public one for users who can pull,
# else the one `decathlon image build` bootstraps from Debian packages.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS build
# Bookworm's python is 3.11.2; a few pure-Python pins (soupsieve 4.1.2) declare >=3.11.5 without
# needing it, so Requires-Python is not enforced here (the test suite runs on this image).
ENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/ctx/wheels PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    PIP_IGNORE_REQUIRES_PYTHON=1
COPY wheels /ctx/wheels
RUN python3 -m venv /opt/decathlon/venv \
 && /opt/decathlon/venv/bin/pip install --quiet -c /ctx/wheels/constraints.txt -r /ctx/wheels/sandbox.txt
# The real MCP servers, each in its own venv, by the same script the host uses (pins in src/ci/servers).
COPY src/ci /opt/decathlon/src/ci
COPY src/decathlon/sandbox/http/site /opt/decathlon/src/decathlon/sandbox/http/site
RUN DECATHLON_SERVERS_DIR=/opt/decathlon/servers /opt/decathlon/venv/bin/python /opt/decathlon/src/ci/install_servers.py \
 && rm -rf /opt/decathlon/servers/*/lib/python3*/site-packages/pip /opt/decathlon/servers/*/bin/pip*
# Host-side extras for the runner only (docker-py, rich, httpx), in a copy of the venv.
RUN python3 -m venv /opt/decathlon/runner-venv \
 && /opt/decathlon/runner-venv/bin/pip install --quiet -c /ctx/wheels/constraints.txt -r /ctx/wheels/sandbox.txt -r /ctx/wheels/runner.txt \
 && rm -rf /opt/decathlon/*venv/lib/python3*/site-packages/pip /opt/decathlon/*venv/bin/pip*

# The servers' venvs share most of their wheels (pydantic-core, cryptography, lxml…): identical files
# become hard links, which the COPY into the sandbox keeps. Not the daemon's own venv: on a
# fuse-overlayfs engine, opening hard-linked files is slower, and its imports are on every setup's path.
FROM build AS dedup
RUN rm -rf /opt/decathlon/runner-venv && hardlink --ignore-time --quiet /opt/decathlon/servers

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
COPY --from=dedup /opt/decathlon /opt/decathlon
COPY src /opt/decathlon/src
# The project as a plain path entry (like the host's compat editable install), plus its task-api.
# (The excel server's log beside its own package goes nowhere: ci/install_servers.py.) The fixtures (a
# prime sandbox's task source) are the grader's to read, never the agent's: they hold oracles and answers.
RUN echo /opt/decathlon/src > "$(echo /opt/decathlon/venv/lib/python3*/site-packages)/decathlon-src.pth" \
 && printf '#!/opt/decathlon/venv/bin/python\nfrom decathlon.sandbox.cli import main\nmain()\n' > /opt/decathlon/venv/bin/task-api \
 && chmod 0755 /opt/decathlon/venv/bin/task-api \
 && chown -R root:grader /opt/decathlon/src/fixtures && chmod -R u=rwX,g=rX,o= /opt/decathlon/src/fixtures \
 && mkdir -p /episodes /run/decathlon && chmod 0755 /episodes && chown agent:agent /run/decathlon
ENV PATH=/opt/decathlon/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DECATHLON_SERVERS_DIR=/opt/decathlon/servers LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 \
    DECATHLON_SANDBOX_IMAGE=1
WORKDIR /episodes
CMD ["sleep", "infinity"]

FROM sandbox AS runner
COPY --from=build /opt/decathlon/runner-venv /opt/decathlon/runner-venv
COPY host /opt/decathlon/src
RUN echo /opt/decathlon/src > "$(echo /opt/decathlon/runner-venv/lib/python3*/site-packages)/decathlon-src.pth" \
 && printf '#!/opt/decathlon/runner-venv/bin/python\nfrom decathlon.cli.main import main\nmain()\n' > /opt/decathlon/runner-venv/bin/decathlon \
 && chmod 0755 /opt/decathlon/runner-venv/bin/decathlon
ENV PATH=/opt/decathlon/runner-venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /opt/decathlon/src
ENTRYPOINT ["decathlon"]
CMD ["demo"]
