# A sandbox image that carries a user's Toolathlon checkout: built by
# `decathlon image build --source CHECKOUT` on top of the project's sandbox image, with BuildKit through the
# engine's API (decathlon/checkout/buildkit.py).
#
# Build context (a tar in the machine's cache, decathlon/checkout/checkout_image.py):
#   python3.13/              Python 3.13 from Debian 13 packages, patched to run from /opt/decathlon/python3.13
#                            (decathlon/checkout/portable_python.py): Toolathlon's scripts and pdf-tools need >= 3.12
#   tools/uv                 the pinned uv
#   wheels/task-env/         cp313 wheels of the checkout's task environment (requirements.txt: the packages of
#                            its uv.lock that install on 3.13), from the wheelhouse
#   wheels/server-<name>/    cp313 wheels of each newer-Python server, from the wheelhouse
#   checkout/                the checkout (no .git, venvs or node_modules)
# `@SERVER@` blocks are repeated by checkout_image.py for each server that needs the newer Python.
ARG SANDBOX_IMAGE

FROM ${SANDBOX_IMAGE} AS python
COPY python3.13 /opt/decathlon/python3.13

FROM python AS task-env
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/task-env,target=/wheels \
    UV_COMPILE_BYTECODE=1 UV_NO_INDEX=1 UV_OFFLINE=1 UV_PYTHON_DOWNLOADS=never UV_LINK_MODE=copy UV_NO_CACHE=1 \
    uv venv --quiet --python /opt/decathlon/python3.13/usr/bin/python3.13 /opt/decathlon/task-env \
 && if [ -s /wheels/requirements.txt ]; then \
      UV_COMPILE_BYTECODE=1 UV_NO_INDEX=1 UV_OFFLINE=1 UV_LINK_MODE=copy UV_NO_CACHE=1 \
      uv pip install --quiet --python /opt/decathlon/task-env/bin/python --find-links /wheels --no-deps \
        -r /wheels/requirements.txt; fi

# @SERVER@ begin: the newer Python's servers, each by the sandbox's own script.
FROM python AS server-@SERVER@
RUN --mount=type=bind,source=tools/uv,target=/usr/local/bin/uv \
    --mount=type=bind,source=wheels/server-@SERVER@,target=/wheels \
    UV_FIND_LINKS=/wheels UV_COMPILE_BYTECODE=1 UV_NO_INDEX=1 UV_OFFLINE=1 UV_PYTHON_DOWNLOADS=never UV_LINK_MODE=copy UV_NO_CACHE=1 \
    DECATHLON_SERVERS_DIR=/opt/decathlon/servers /opt/decathlon/venv/bin/python /opt/decathlon/src/ci/install_servers.py @SERVER@
# @SERVER@ end

FROM ${SANDBOX_IMAGE} AS checkout
COPY --from=python /opt/decathlon/python3.13 /opt/decathlon/python3.13
COPY --from=task-env /opt/decathlon/task-env /opt/decathlon/task-env
# @SERVER@ begin
COPY --from=server-@SERVER@ /opt/decathlon/servers/@SERVER@ /opt/decathlon/servers/@SERVER@
# @SERVER@ end
# The grader's to read (preprocess, evaluators, ground truth), not the agent's: root:grader 0750.
COPY checkout /opt/decathlon/checkout
RUN chown -R root:grader /opt/decathlon/checkout && chmod -R u+rwX,g+rX,g-w,o-rwx /opt/decathlon/checkout
ENV DECATHLON_TASK_PYTHON=/opt/decathlon/task-env/bin/python TOOLATHLON_ROOT=/opt/decathlon/checkout
