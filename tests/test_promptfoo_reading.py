"""Reading promptfoo configs as promptfoo reads them: YAML 1.2's values, `$ref`, `env`,
defaultTest merged, var expansion, vars and tests from files and globs, prompts and their
names, providers; the case ids (a property test: never shifted by other tests); gate.yml's
`promptfoo:` suites."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.errors import InputError
from gate.inputs.config import load_config
from gate.promptfoo.inputs.cases import case_ids, promptfoo_cases, vars_id
from gate.promptfoo.inputs.config import read_promptfoo
from gate.promptfoo.inputs.files import DiskFiles
from gate.promptfoo.inputs.yaml12 import load_yaml12


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def cases_of(root: Path, config: str, **files: str):
    write(
        root,
        {
            "promptfooconfig.yaml": config,
            **{k.replace("__", "/").replace("_dot_", "."): v for k, v in files.items()},
        },
    )
    return promptfoo_cases(read_promptfoo(DiskFiles(root), "promptfooconfig.yaml"))


# --- YAML ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Yes", "Yes"), ("no", "no"), ("on", "on"), ("OFF", "OFF"), ("y", "y"), ("n", "n"),
        ("true", True), ("False", False), ("~", None), ("null", None), ("", None),
        ("0123", 123), ("0o17", 15), ("0x1F", 31), ("1_000", "1_000"), ("1:20", "1:20"),
        ("+12", 12), ("1.0", 1), ("1.5", 1.5), (".5", 0.5), ("1e3", 1000), ("0b101", "0b101"),
        ("2024-01-05", {}), ("2024-01-05T10:20:30Z", {}), ("'Yes'", "Yes"),
    ],
)  # fmt: skip
def test_yaml_values_are_promptfoos_not_pyyamls(text: str, value: object) -> None:
    data, _ = load_yaml12(f"key: {text}\n", "t.yaml")
    assert data == {"key": value} and type(data["key"]) is type(value)


def test_yaml_repeated_keys_and_several_documents_are_errors() -> None:
    with pytest.raises(InputError, match=r"t.yaml:2: malformed YAML: duplicated mapping key 'a'"):
        load_yaml12("a: 1\na: 2\n", "t.yaml")
    with pytest.raises(InputError, match="expected a single document"):
        load_yaml12("a: 1\n---\nb: 2\n", "t.yaml")
    merged, _ = load_yaml12("base: &b {x: 1}\nuse: {<<: *b, y: 2}\n", "t.yaml")
    assert merged["use"] == {"x": 1, "y": 2}


# --- tests, defaultTest, vars ----------------------------------------------------------------


def test_default_test_is_merged_as_promptfoo_merges_it(tmp_path: Path) -> None:
    cases = cases_of(
        tmp_path,
        """
        prompts: ["{{ a }}"]
        providers: [openai:gpt-4o-mini]
        defaultTest:
          vars: {a: default, b: kept}
          assert: [{type: contains, value: x}]
          threshold: 0.5
          metadata: {severity: blocker, team: web}
        tests:
          - description: one
            vars: {a: own}
            assert: [{type: icontains, value: y}]
            metadata: {team: api}
          - description: two
            threshold: 1
            options: {disableDefaultAsserts: true}
            assert: [{type: equals, value: z}]
        """,
    )
    one, two = cases
    assert one.input == {"a": "own", "b": "kept"}
    assert [a.type for a in one.assertions.assertions] == ["contains", "icontains"]
    assert one.assertions.threshold == 0.5 and two.assertions.threshold == 1
    assert (one.severity, one.metadata["team"]) == ("blocker", "api")
    assert [a.type for a in two.assertions.assertions] == ["equals"]


def test_refs_env_expansion_and_files(tmp_path: Path) -> None:
    cases = cases_of(
        tmp_path,
        """
        env: {WHO: world}
        definitions:
          polite: {type: icontains, value: "{{ name }}"}
        prompts: ["{{ greeting }} {{ name }}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - vars: {greeting: "hi {{ env.WHO }}", name: [ann, bob]}
            assert: [{$ref: "#/definitions/polite"}]
          - vars: {greeting: file://texts/hello.txt, name: cy, data: file://texts/data.yaml}
          - vars: vars/*.yaml
          - file://more/*.yaml
        """,
        texts__hello_dot_txt="Hello there\n\n",
        texts__data_dot_yaml="k: 1.0\n",
        vars__a_dot_yaml="name: dee\n",
        vars__b_dot_yaml="greeting: hey\n",
        more__x_dot_yaml="- vars: {name: eve}\n  assert: [{type: equals, value: eve}]\n",
    )
    ann, bob, cy, dee, eve = cases
    assert (ann.input, bob.input["name"]) == ({"greeting": "hi world", "name": "ann"}, "bob")
    assert ann.assertions.assertions[0].value == "ann"  # the $ref, rendered with the vars
    assert cy.input == {"greeting": "Hello there", "name": "cy", "data": '{"k":1}'}
    assert dee.input == {"name": "dee", "greeting": "hey"}  # both files, merged
    assert (eve.file, eve.line, eve.task) == ("more/x.yaml", 1, "x")


def test_a_csv_tests_file_and_its_rows(tmp_path: Path) -> None:
    cases = cases_of(
        tmp_path,
        "prompts: ['{{ q }}']\nproviders: [openai:gpt-4o-mini]\ntests: file://rows.csv\n",
        rows_dot_csv=(
            "q,id,__expected,__expected2,__metric,__threshold\n"
            'hello,7,contains: hi,"icontains-any: a, b",greeting,0.5\n'
        ),
    )
    (case,) = cases
    assert case.input == {"q": "hello", "id": "7"}  # `id` is a variable in promptfoo's CSV
    assert case.system_input() == {"q": "hello", "id": "7"}  # promptfoo's vars, as they are
    assert [a.label for a in case.assertions.assertions] == ["contains:hi", "icontains-any:a, b"]
    assert {a.metric for a in case.assertions.assertions} == {"greeting"}
    assert (case.assertions.threshold, case.file, case.line) == (0.5, "rows.csv", 2)


# --- prompts and providers -------------------------------------------------------------------


def test_prompts_their_names_and_the_matrix(tmp_path: Path) -> None:
    write(tmp_path, {
        "promptfooconfig.yaml": """
            prompts:
              - file://prompts/*.txt
              - {id: file://chat.json, label: chat}
              - "An inline prompt that is rather long: {{ q }}"
            providers:
              - openai:chat:gpt-4o-mini
              - {id: anthropic:messages:claude-3-5-haiku-latest, prompts: [chat]}
            """,
        "prompts/a.txt": "One {{ q }}\n---\nTwo {{ q }}\n",
        "chat.json": '[{"role": "system", "content": "Be brief"}, {"role": "user", "content": "{{ q }}"}]',
    })  # fmt: skip
    config = read_promptfoo(DiskFiles(tmp_path), "promptfooconfig.yaml")
    pairs = [(p.name, q.name) for p, q in config.matrix()]
    assert pairs == [
        ("prompts/a.txt#1", "openai:chat:gpt-4o-mini"),
        ("prompts/a.txt#2", "openai:chat:gpt-4o-mini"),
        ("chat", "openai:chat:gpt-4o-mini"),
        ("An inline prompt that is rather long: {…", "openai:chat:gpt-4o-mini"),
        ("chat", "anthropic:messages:claude-3-5-haiku-latest"),
    ]
    chat = config.prompts()[2]
    assert json.loads(chat.raw)[0] == {"role": "system", "content": "Be brief"}
    assert config.files.seen[:3] == ["promptfooconfig.yaml", "prompts/*.txt", "prompts/a.txt"]


@pytest.mark.parametrize(
    ("provider", "message"),
    [
        ("bedrock:claude", "provider 'bedrock:claude' is not one the gate runs"),
        ("openai:responses:gpt-4o", "is not one the gate runs"),
        ("{id: openai:gpt-4o, config: {apiKey: sk-1}}", "`config.apiKey`"),
        ("{id: openai:gpt-4o, transform: output.trim()}", "`transform`"),
    ],
)
def test_unsupported_providers_are_named(tmp_path: Path, provider: str, message: str) -> None:
    write(tmp_path, {"promptfooconfig.yaml": f"prompts: [hi]\nproviders: [{provider}]\n"})
    with pytest.raises(InputError, match=message):
        read_promptfoo(DiskFiles(tmp_path), "promptfooconfig.yaml").matrix()


# --- gate.yml's promptfoo suites -------------------------------------------------------------


def test_a_single_pair_keeps_the_suites_name_and_paths_resolve(tmp_path: Path) -> None:
    write(tmp_path, {
        "evals/promptfooconfig.yaml": "prompts: [hi]\nproviders: [openai:gpt-4o-mini]\ntests: []\n",
        "gate.yml": "suites:\n  - name: support\n    promptfoo: evals/promptfooconfig.yaml\n",
    })  # fmt: skip
    (tmp_path / ".git").mkdir()
    loaded = load_config(tmp_path / "gate.yml")
    (suite,) = loaded.config.suites
    assert (suite.name, suite.promptfoo, suite.system.kind) == (
        "support", "evals/promptfooconfig.yaml", "promptfoo"
    )  # fmt: skip
    assert suite.system.config == str(tmp_path.resolve() / "evals/promptfooconfig.yaml")
    assert loaded.suite_line("support", "promptfoo") == 3


@pytest.mark.parametrize(
    ("gate", "message"),
    [
        ("suites:\n  - name: s\n    promptfoo: missing.yaml\n", "gate.yml:3: key `promptfoo`: promptfoo config 'missing.yaml' not found"),
        ("suites:\n  - name: s\n    promptfoo: p.yaml\n    cases: c.jsonl\n", "gate.yml:4: key `cases`: the promptfoo config is the system and the cases"),
        ("promptfoo: p.yaml\nsystem: {kind: python, target: a:b}\n", "gate.yml:2: key `system`"),
    ],
)  # fmt: skip
def test_gate_yml_promptfoo_errors_name_the_line(tmp_path: Path, gate: str, message: str) -> None:
    write(tmp_path, {"gate.yml": gate, "p.yaml": "prompts: [hi]\nproviders: [openai:x]\n"})
    with pytest.raises(InputError) as info:
        load_config(tmp_path / "gate.yml")
    assert message in str(info.value).replace(str(tmp_path.resolve()) + "/", "")


# --- ids -------------------------------------------------------------------------------------


def test_ids_are_descriptions_when_unique_else_from_the_vars(tmp_path: Path) -> None:
    ids = [c.id for c in cases_of(tmp_path, """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - {description: capital, vars: {q: Paris}}
          - {description: twice, vars: {q: a}}
          - {description: twice, vars: {q: b}}
          - {vars: {q: "What is the capital of France?"}}
          - {vars: {q: same}}
          - {vars: {q: same}}
        """)]  # fmt: skip
    assert ids[0] == "capital"
    assert ids[1] == f"twice [{vars_id({'q': 'a'}).rsplit('-', 1)[1]}]" and ids[2].startswith(
        "twice ["
    )
    assert (
        ids[3].startswith("what-is-the-capital-of-france-") and len(ids[3].rsplit("-", 1)[1]) == 8
    )
    assert ids[5] == ids[4] + "#2"


VARS = st.dictionaries(
    st.from_regex(r"[a-z]{1,6}", fullmatch=True),
    st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none()),
    min_size=1,
    max_size=4,
)
TESTS = st.lists(
    st.tuples(st.one_of(st.none(), st.sampled_from(["a", "b", "c"])), VARS), max_size=8
)


@given(tests=TESTS, inserted=TESTS, at=st.integers(min_value=0, max_value=8))
def test_an_id_never_shifts_when_tests_are_inserted(tests, inserted, at) -> None:
    """Inserting tests anywhere leaves every other test's id as it was, unless the inserted
    ones share its description (then it is derived from its vars) or its very vars."""
    at = min(at, len(tests))
    before = case_ids([d for d, _ in tests], [v for _, v in tests])
    after_tests = tests[:at] + inserted + tests[at:]
    after = case_ids([d for d, _ in after_tests], [v for _, v in after_tests])
    kept = after[:at] + after[at + len(inserted) :]
    new_descriptions = {d for d, _ in inserted if d}
    new_vars = [v for _, v in inserted]
    for (description, vars_), old, new in zip(tests, before, kept, strict=True):
        if description in new_descriptions or vars_ in new_vars:
            continue
        assert old == new


@given(vars_=VARS, data=st.data())
def test_a_derived_id_depends_on_the_vars_only(vars_, data) -> None:
    keys = data.draw(st.permutations(list(vars_)))
    shuffled = {k: vars_[k] for k in keys}
    assert vars_id(shuffled) == vars_id(vars_)
    other = dict(vars_)
    key = next(iter(other))
    other[key] = "changed" if other[key] != "changed" else "changed again"
    assert vars_id(other) != vars_id(vars_)


@given(tests=TESTS)
def test_ids_are_unique(tests) -> None:
    ids = case_ids([d for d, _ in tests], [v for _, v in tests])
    assert len(set(ids)) == len(ids)


def test_a_symlink_out_of_the_checkout_is_not_read(tmp_path: Path) -> None:
    """A PR's `file://` variable naming a link to the runner's files (`/proc/self/environ`
    holds the provider keys) would send them to the model: it is refused."""
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("OPENAI_API_KEY=sk-live\n")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(InputError, match=r"leak\.txt: leads outside the checkout"):
        cases_of(
            root,
            "prompts: ['{{ x }}']\nproviders: [openai:gpt-4o-mini]\ntests:\n  - vars: {x: file://leak.txt}\n",
        )


def test_metadata_makes_a_case_blocking_or_held_out(tmp_path: Path) -> None:
    (case,) = cases_of(tmp_path, """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - vars: {q: x}
            metadata: {severity: blocker, heldout: true}
        """)  # fmt: skip
    assert (case.severity, case.heldout) == ("blocker", True)
    with pytest.raises(InputError, match=r"`metadata\.severity` 'critical' is not one of"):
        cases_of(
            tmp_path,
            "prompts: [a]\nproviders: [openai:x]\ntests: [{metadata: {severity: critical}}]\n",
        )


def test_what_a_config_reads_is_watched_and_held_out_tests_hide_its_diff(tmp_path: Path) -> None:
    from gate.promptfoo.inputs.suites import referenced_files

    write(tmp_path, {
        "evals/promptfooconfig.yaml": """
            prompts: [file://p.txt]
            providers: [{id: openai:gpt-4o-mini, config: {tools: file://tools.json}}]
            tests:
              - vars: {q: file://q.txt}
                metadata: {heldout: true}
                assert: [{type: python, value: file://checks/tone.py}]
              - file://more/*.yaml
            """,
        "evals/p.txt": "{{ q }}", "evals/tools.json": "[]", "evals/q.txt": "x",
        "evals/more/a.yaml": "- vars: {q: y}\n",
    })  # fmt: skip
    system, cases = referenced_files(tmp_path / "evals/promptfooconfig.yaml", tmp_path)
    assert system == ["evals/promptfooconfig.yaml", "evals/p.txt", "evals/tools.json"]
    assert cases == [
        "evals/promptfooconfig.yaml", "evals/more/*.yaml", "evals/more/a.yaml", "evals/q.txt",
        "evals/checks/tone.py",
    ]  # fmt: skip
    (tmp_path / "evals/promptfooconfig.yaml").write_text("prompts: [\n")
    assert referenced_files(tmp_path / "evals/promptfooconfig.yaml", tmp_path) == (["**"], [])


# --- the documented keys: scenarios, assertionTemplates, metadata, options, transforms -------


SCENARIO_CONFIG = """
    prompts: ["{{ greeting }} {{ input }}"]
    providers: [openai:gpt-4o-mini]
    defaultTest:
      description: every greeting
      vars: {greeting: Hi, tone: plain}
      metadata: {team: web}
      assert: [{type: not-contains, value: error}]
    tests:
      - vars: {input: first}
    scenarios:
      - config:
          - vars: {greeting: Hola}
            metadata: {team: es}
            assert: [{type: contains, value: Hola}]
          - $values: file://entries/*.yaml
        tests:
          - description: Greets the world
            vars: {input: world}
            metadata: {severity: blocker}
            assert: [{type: contains, value: world}]
      - file://more/scenario.yaml
    """


def test_scenarios_are_promptfoos_config_entries_times_tests(tmp_path: Path) -> None:
    cases = cases_of(
        tmp_path,
        SCENARIO_CONFIG,
        entries__a_dot_yaml="- vars: {greeting: Bonjour}\n- vars: {greeting: Hallo}\n",
        more__scenario_dot_yaml=(
            "config:\n  - vars: {greeting: Ciao}\n"
            "tests:\n  - file://rows.csv\n  - vars: {input: all}\n"
        ),
        rows_dot_csv="input,__expected\nfriend,icontains: ciao\n",
    )
    first, hola, bonjour, hallo, ciao_row, ciao_all = cases
    assert first.metadata == {"team": "web"}  # the config's own test comes first
    assert [c.input["greeting"] for c in cases] == [
        "Hi",
        "Hola",
        "Bonjour",
        "Hallo",
        "Ciao",
        "Ciao",
    ]
    assert hola.input == {"greeting": "Hola", "tone": "plain", "input": "world"}
    assert hola.metadata == {"description": "Greets the world", "team": "es", "severity": "blocker"}
    assert hola.severity == "blocker" and bonjour.metadata["team"] == "web"
    labels = [a.label for a in hola.assertions.assertions]  # defaultTest's, the entry's, the test's
    assert labels == ["not-contains:error", "contains:Hola", "contains:world"]
    assert [a.label for a in bonjour.assertions.assertions] == [
        "not-contains:error", "contains:world"
    ]  # fmt: skip
    shared = {hola.id, bonjour.id, hallo.id}  # one description, three entries: a hash each
    assert len(shared) == 3 and all(i.startswith("Greets the world [") for i in shared)
    assert (hola.file, hola.line) == ("promptfooconfig.yaml", 17)
    assert (ciao_row.file, ciao_row.line, ciao_row.task) == ("rows.csv", 2, "rows")
    assert [a.label for a in ciao_row.assertions.assertions] == [
        "not-contains:error", "icontains:ciao"
    ]  # fmt: skip
    assert ciao_all.metadata["description"] == "every greeting"  # defaultTest's, in a scenario
    assert "description" not in first.metadata  # ... but not in an ordinary test, as promptfoo


def test_a_scenario_without_tests_runs_its_config_entries(tmp_path: Path) -> None:
    cases = cases_of(tmp_path, """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        scenarios:
          - config:
              - vars: {q: a}
                assert: [{type: equals, value: a}]
              - vars: {q: b}
        """)  # fmt: skip
    assert [(c.input, len(c.assertions.assertions)) for c in cases] == [
        ({"q": "a"}, 1),
        ({"q": "b"}, 0),
    ]


def test_assertion_templates_and_keys_beside_a_ref(tmp_path: Path) -> None:
    (case,) = cases_of(tmp_path, """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - vars: {q: x}
            assert:
              - $ref: "#/assertionTemplates/polite"
              - {$ref: "#/assertionTemplates/polite", weight: 2, value: thanks}
        assertionTemplates:
          polite: {type: icontains, value: please, metric: tone}
        """)  # fmt: skip
    first, second = case.assertions.assertions
    assert (first.value, first.weight, first.metric) == ("please", 1.0, "tone")
    assert (second.value, second.weight, second.metric) == ("thanks", 2.0, "tone")


def test_top_level_metadata_is_every_tests_unless_default_test_has_its_own(tmp_path: Path) -> None:
    config = """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        metadata: {severity: blocker, owner: web}
        tests: [{vars: {q: x}, metadata: {owner: api}}]
        """
    (case,) = cases_of(tmp_path, config)
    assert (case.severity, case.metadata) == ("blocker", {"severity": "blocker", "owner": "api"})
    (case,) = cases_of(tmp_path, config + "defaultTest: {metadata: {tier: 1}}\n")
    assert (case.severity, case.metadata) == ("major", {"tier": 1, "owner": "api"})


@pytest.mark.parametrize(
    "key",
    ["description: d", "tags: {env: ci}", "outputPath: out.json", "sharing: false",
     "writeLatestResults: false", "derivedMetrics: [{name: f1, value: 'a*b'}]",
     "tracing: {enabled: false}", "$schema: https://promptfoo.dev/config-schema.json",
     "evaluateOptions: {maxConcurrency: 2, delay: 10, cache: false, timeoutMs: 5000, repeat: 1}",
     "commandLineOptions: {maxConcurrency: 4, cache: false, share: false, envPath: .env}",
     "definitions: {a: 1}"],
)  # fmt: skip
def test_keys_that_shape_only_promptfoos_output_are_accepted(tmp_path: Path, key: str) -> None:
    config = f"prompts: ['{{{{ q }}}}']\nproviders: [openai:gpt-4o-mini]\n{key}\ntests: [{{vars: {{q: x}}}}]\n"
    assert [c.input for c in cases_of(tmp_path, config)] == [{"q": "x"}]


def test_every_key_of_promptfoos_schema_is_honoured_accepted_or_refused() -> None:
    from gate.promptfoo.inputs import keys

    schema = {
        "tags", "description", "providers", "prompts", "tests", "scenarios", "defaultTest",
        "outputPath", "sharing", "nunjucksFilters", "env", "derivedMetrics", "extensions",
        "metadata", "redteam", "writeLatestResults", "tracing", "evaluateOptions",
        "commandLineOptions", "targets",
    }  # promptfoo's config-schema.json, its top-level properties  # fmt: skip
    placed = [keys.HONOURED, keys.REFERENCED, keys.NO_EFFECT, keys.OPTION_KEYS, keys.REFUSED]
    assert all(sum(key in group for group in placed) == 1 for key in schema)
    assert "assertionTemplates" in keys.REFERENCED


def test_transforms_are_python_functions_of_the_checkout(tmp_path: Path) -> None:
    (case,) = cases_of(tmp_path, """
        prompts: ["{{ q }}"]
        providers: [openai:gpt-4o-mini]
        defaultTest:
          options: {transform: file://lib/clean.py}
        tests:
          - vars: {q: x}
            assert:
              - {type: equals, value: x, transform: "file://lib/clean.py:first"}
              - {type: contains, value: x}
        """)  # fmt: skip
    assert case.assertions.transform == "lib.clean:get_transform"
    assert case.assertions.assertions[0].transform == "lib.clean:first"
    assert case.python_targets == ["lib.clean:get_transform", "lib.clean:first"]
    assert case.assertions.offline().assertions == ()  # every output goes through the sandbox


def test_scenario_files_and_transforms_are_watched(tmp_path: Path) -> None:
    from gate.promptfoo.inputs.suites import referenced_files

    write(tmp_path, {
        "promptfooconfig.yaml": """
            prompts: ["{{ q }}"]
            providers: [openai:gpt-4o-mini]
            scenarios: [file://scenarios/*.yaml]
            """,
        "scenarios/a.yaml": """
            config: [{$values: file://entries.yaml}]
            tests: [{vars: {q: x}, assert: [{type: equals, value: x, transform: file://t.py}]}]
            """,
        "entries.yaml": "- vars: {z: 1}\n",
    })  # fmt: skip
    _, cases = referenced_files(tmp_path / "promptfooconfig.yaml", tmp_path)
    assert cases == ["scenarios/*.yaml", "scenarios/a.yaml", "entries.yaml", "t.py"]


def test_vars_files_as_the_guide_writes_them_and_a_csv_input_column(tmp_path: Path) -> None:
    cases = cases_of(
        tmp_path,
        """
        prompts: ["{{ language }}: {{ input }}"]
        providers: [openai:gpt-4o-mini]
        tests:
          - vars: file://vars/*.yaml
          - file://tests.csv
        """,
        vars__a_dot_yaml="language: French\n",
        vars__b_dot_yaml="input: Hello world\n",
        tests_dot_csv='input,language\n"What is 2+2?",English\n',
    )
    assert [c.input for c in cases] == [
        {"language": "French", "input": "Hello world"},  # promptfoo 0.121 loads nothing here
        {"input": "What is 2+2?", "language": "English"},  # `input` is a variable in promptfoo
    ]  # fmt: skip
