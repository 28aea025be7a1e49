# The Eval Gate container action: `gate action` with git, on a slim Python image.
FROM python:3.12-slim-bookworm

# The release workflow builds this once per version and pushes it to ghcr.io; action.yml at a
# release tag runs that image. On main, and in forks, GitHub builds this file on every run.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore

# git compares the PR with its base; its manuals, docs and translations are left out, and so is
# perl (47 MB, half of what git brings): every git command the gate runs is built in, perl only
# serves git's scripts (svn, send-email, ...). The runner mounts the workspace owned by its own
# user while the action runs as root: declare it safe for every user, in the system config.
RUN printf '%s\n' 'path-exclude=/usr/share/doc/*' 'path-exclude=/usr/share/man/*' \
        'path-exclude=/usr/share/info/*' 'path-exclude=/usr/share/locale/*' \
        > /etc/dpkg/dpkg.cfg.d/01-eval-gate-slim \
    && apt-get update \
    && apt-get install -y --no-install-recommends "git=1:2.39.*" \
    && dpkg --purge --force-depends perl perl-modules-5.36 libperl5.36 liberror-perl \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /var/log/apt \
        /var/log/dpkg.log \
    && git config --system --add safe.directory /github/workspace

WORKDIR /opt/eval-gate
COPY pyproject.toml README.md ./
COPY gate ./gate
COPY templates ./templates
COPY cases ./cases
COPY examples ./examples
# Every dependency comes as a wheel, so no compiler is needed; the sources go afterwards, and
# so do numpy's test suites, f2py, distutils and C headers and every type stub (about a third
# of numpy), in the same layer. The last lines prove that what the gate uses still works.
RUN pip install . \
    && site="$(python -c 'import numpy, pathlib; print(pathlib.Path(numpy.__file__).parents[1])')" \
    && find "$site/numpy" -depth -type d -name tests -exec rm -rf {} + \
    && rm -rf "$site/numpy/f2py" "$site/numpy/distutils" "$site/numpy/_core/include" \
        "$site/numpy/_pyinstaller" \
    && find "$site" -name '*.pyi' -delete \
    && rm -rf /opt/eval-gate \
    && python -c "import cmarkgfm, git, jinja2, jsonschema, requests; \
from gate.compare.stats import bootstrap_mean_interval, sign_flip_test; \
assert sign_flip_test([1.0] * 30)[0] < 0.001 and sign_flip_test([1.0] * 5)[1]; \
assert bootstrap_mean_interval([0.0, 1.0] * 20, 0.95)[0] < 0.5" \
    && gate --version

WORKDIR /github/workspace
# Isolated mode (-I): the job's PYTHONPATH (a `src/` layout) and the PR's sitecustomize.py, or
# modules named like the gate's, never run as the gate (docs/security.md); -I ignores the
# PYTHON* variables above, so the ones the gate's log needs are flags.
ENTRYPOINT ["python", "-I", "-u", "-B", "-m", "gate", "action"]
