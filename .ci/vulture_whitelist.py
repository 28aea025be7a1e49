# Names vulture (`.ci/run`, config in pyproject.toml) cannot see used. Bare names, as vulture
# reads them; each group says who uses them.
# ruff: noqa: B018, F821

# Fields of models that are written out (report lines, summaries, comparison.json) and read by
# the templates, or by whoever reads those files; vulture sees only Python that reads them.
schema_version  # RunMeta
config_file  # RunMeta
n_cases  # RunMeta
by_task  # Summary
output_chars  # SideCase (comparison.json: how long a side's output was)
heldout_left_out  # RubricComparison (base.md.j2)
judged_one_side
nonzero  # ResamplingResult (comparison.json)
id_chars  # render limits (base.md.j2, macros.md.j2)
intro  # PathView (macros.md.j2: where an agent's two paths part)
by_change  # ErrorGroup (macros.md.j2, macros.txt.j2)

# Read by gate/sandbox, which the scan leaves out: gate.yml's sandbox settings, a hidden
# test's expected value.
eq
memory_mb
cpu_s
max_processes
max_open_files
max_file_mb
max_output_kb
workers
uid_base

# Systems built by name (gate/systems/__init__.py FACTORIES).
AnthropicMessagesSystem
CommandProcessSystem
HttpServiceSystem
OpenAIChatSystem
PromptfooChatSystem
PythonFunctionSystem
ReplayFileSystem

# requests.Session settings: read by requests.
_.trust_env
_.proxies
_.verify

# Read by the tests only: a counter, a convenience and a reference summariser.
_.slowdowns
_.total_tokens
summarise

# Report metadata read by the comment's templates and by users of the report format.
_.system_config_file

# jinja2's sandbox reads it: which binary operators go through call_binop (render/environment.py).
_.intercepted_binops

# PyYAML reads the class attribute: each loader's own implicit resolvers (yaml12.py).
_.yaml_implicit_resolvers

# Fields of the json format and of the reports' `auto` record, read by their users (the
# two-sided test's p-value of the statistics; the standard error the rounds aimed at).
_.decision_p_value
_.se_target_points

# The discriminators of the runner's requests (gate.run.protocol): pydantic reads them.
_.op
# io.TextIOBase asks it: a defused stream is writable (joblog.Defused).
_.writable
# The sandbox's protections in a report's metadata (gate.report.descriptions.SandboxInfo),
# written for whoever reads the report (docs/sandbox.md describes them).
_.address_space_mb
_.file_size_mb
_.open_files
_.processes
_.network
_.pid_namespace
_.mount_namespace
_.filesystem
_.no_new_privileges
_.rlimits
_.output_cap_kb
_.in_process
_.evidence
_.degraded

# The gate's pytest plugin (gate/frameworks/pytest_runner.py): hooks pytest calls by name, and
# the attribute pytest keeps each run's captured output in.
pytest_collectreport
pytest_collection_modifyitems
pytest_runtest_protocol
_report_sections
