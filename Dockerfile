# The Eval Gate container action: `gate action` with git, on a slim Python image.
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# git compares the PR with its base. The runner mounts the workspace owned by its own user
# while the action runs as root: declare it safe for every user, in the system config.
RUN apt-get update \
    && apt-get install -y --no-install-recommends "git=1:2.39.*" \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory /github/workspace

WORKDIR /opt/eval-gate
COPY pyproject.toml README.md ./
COPY gate ./gate
COPY templates ./templates
COPY cases ./cases
COPY examples ./examples
# Every dependency comes as a wheel, so no compiler is needed; the sources go afterwards.
RUN pip install . \
    && rm -rf /opt/eval-gate

WORKDIR /github/workspace
ENTRYPOINT ["gate", "action"]
