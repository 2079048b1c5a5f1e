"""What the fuzz harness found beyond issue 26's list, each pinned by a test named for the
behaviour (the harness itself keeps looking: test_fuzz_cli.py)."""

from __future__ import annotations

from typer.testing import CliRunner

from schemacli.app import app

runner = CliRunner()
TOO_LONG = "x" * 300 + ".avsc"  # longer than NAME_MAX: stat() fails with ENAMETOOLONG


def test_a_pyproject_whose_tool_is_a_value_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("tool = 1\n")
    result = runner.invoke(
        app,
        ["subjects", "list", "-r", "http://127.0.0.1:9"],
        env={"SCHEMACLI_CONFIG": "pyproject.toml"},
    )
    assert result.exit_code == 2, result.output
    assert "pyproject.toml" in result.stderr and "must be a table" in result.stderr


def test_validate_names_a_path_too_long_to_look_at_and_exits_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["validate", TOO_LONG])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "File name too long" in result.stdout + result.stderr


def test_a_store_path_too_long_to_name_is_an_input_error_in_every_command_that_takes_one(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    for args in (
        ["readers", "remove", "c1", "--store", TOO_LONG],
        ["readers", "remove", "c1", "--store", TOO_LONG, "-o", "json"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "longer than the file system can name" in result.stderr
        assert "Traceback" not in result.output
    assert '"exit_code": 2' in result.stdout  # -o json: the error document
    assert not any(tmp_path.iterdir())  # nothing written


def test_a_subject_name_that_is_not_utf8_is_a_usage_error_before_the_registry_is_asked(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    # b"bad\xff" on a command line reaches Python as "bad\udcff" (PEP 383)
    for args in (["subjects", "show"], ["config", "get"]):
        result = runner.invoke(app, [*args, "bad\udcff", "-r", "http://127.0.0.1:9"])
        assert result.exit_code == 2, result.output
        assert "not valid UTF-8" in result.stderr


SECRET = "Sx0123456789"


def test_a_command_line_that_does_not_parse_never_echoes_a_secret(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (
        ["config", "delete", "a", "--registry", "--", f"ftp://alice:{SECRET}@127.0.0.1:9"],
        ["config", "get", "--", "--password", SECRET],
        ["subjects", "show", "--", "x", "-r", f"http://alice:{SECRET}@127.0.0.1:9"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        assert SECRET not in result.stdout + result.stderr
        assert "unexpected extra argument" in result.stderr


def test_a_credential_in_a_registry_urls_query_is_masked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["config", "get", "-r", f"http://127.0.0.1:9?password={SECRET}"])
    assert result.exit_code == 2, result.output
    assert SECRET not in result.stdout + result.stderr
    assert "query or fragment" in result.stderr


def test_a_secret_spark_conf_is_masked_in_the_dry_run(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    shutil.copytree(root / "schemas", tmp_path / "schemas")
    mapping = (root / "examples/mappings/taxi-ride-v2-to-v1.yaml").read_text()
    (tmp_path / "m.yaml").write_text(mapping.replace("../../schemas/", "schemas/"))
    for output in ("text", "json"):
        result = runner.invoke(
            app,
            [
                "migrate",
                "deploy",
                "m.yaml",
                "-b",
                "127.0.0.1:9",
                "--dry-run",
                "-o",
                output,
                "--conf",
                f"spark.ssl.keyPassword={SECRET}",
                "--conf",
                "spark.executor.memory=2g",
            ],
        )
        assert result.exit_code == 0, result.output
        assert SECRET not in result.stdout + result.stderr
        assert "spark.executor.memory=2g" in result.stdout


def test_an_out_path_too_long_to_write_is_refused_with_exit_2(tmp_path, monkeypatch):
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    shutil.copytree(root / "schemas", tmp_path / "schemas")
    result = runner.invoke(
        app,
        [
            "migrate",
            "plan",
            "--from",
            "schemas/migration/taxi-ride-v2-breaking.avsc",
            "--to",
            "schemas/subjects/taxi-rides-value/v1.avsc",
            "--out",
            TOO_LONG,
        ],
    )
    assert result.exit_code == 2, result.output
    assert "too long" in result.stderr and "nothing was written" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schemas"]
