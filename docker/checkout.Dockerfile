# A sandbox image that carries a user's Toolathlon checkout: built by
# `decathlon image build --source CHECKOUT` on top of the project's sandbox image.
#
# Build context (build/checkout-context/), assembled on the host:
#   python3.13/    Python 3.13 from Debian 13 packages, patched to run from /opt/decathlon/python3.13
#                  (decathlon/checkout/portable_python.py): Toolathlon's scripts and pdf-tools need >= 3.12
#   wheels/        cp313 wheels of the checkout's task environment (task-env.txt: the packages of its
#                  uv.lock that install on 3.13) and of the newer-Python servers
#   pip/           pip itself, as a wheel to run from
#   checkout/      the checkout (no .git, venvs or node_modules)
ARG SANDBOX_IMAGE

FROM ${SANDBOX_IMAGE} AS build
COPY python3.13 /opt/decathlon/python3.13
COPY wheels /ctx/wheels
COPY pip /ctx/pip
# pip runs from its wheel: the sandbox's venvs carry none.
RUN PIP=$(echo /ctx/pip/pip-*.whl) \
 && /opt/decathlon/python3.13/usr/bin/python3.13 -m venv --without-pip /opt/decathlon/task-env \
 && /opt/decathlon/task-env/bin/python "$PIP/pip" install --quiet --disable-pip-version-check --no-index \
      --find-links /ctx/wheels --no-deps -r /ctx/wheels/task-env.txt \
 && DECATHLON_SERVERS_DIR=/opt/decathlon/servers DECATHLON_PIP_WHEEL="$PIP" PIP_NO_INDEX=1 PIP_FIND_LINKS=/ctx/wheels \
      /opt/decathlon/venv/bin/python /opt/decathlon/src/ci/install_servers.py

FROM ${SANDBOX_IMAGE} AS checkout
COPY --from=build /opt/decathlon/python3.13 /opt/decathlon/python3.13
COPY --from=build /opt/decathlon/task-env /opt/decathlon/task-env
COPY --from=build /opt/decathlon/servers /opt/decathlon/servers
# The grader's to read (preprocess, evaluators, ground truth), not the agent's: root:grader 0750.
COPY checkout /opt/decathlon/checkout
RUN chown -R root:grader /opt/decathlon/checkout && chmod -R u+rwX,g+rX,g-w,o-rwx /opt/decathlon/checkout
ENV DECATHLON_TASK_PYTHON=/opt/decathlon/task-env/bin/python TOOLATHLON_ROOT=/opt/decathlon/checkout
