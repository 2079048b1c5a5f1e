"""Schema registries that speak Confluent's REST API, started for real (never mocked).

Confluent's own server is not on Maven Central, so two existing implementations are used:

* ``apicurio``: Apicurio Registry 3.0.9 (Quarkus, JVM), the ``all`` tar.gz distribution of
  ``io.apicurio:apicurio-registry-app`` from Maven Central; storage is its default in-memory H2;
  the Confluent API is served under ``/apis/ccompat/v7``. (3.3.x is compiled for Java 21; this
  machine has JDK 17.)
* ``axonops``: AxonOps Schema Registry v0.2.1 (Go), built from the module pinned in
  tests/stack/axonops/go.mod into ``.cache/bin/``; memory storage; Confluent API at the root.

Both are set to the Confluent default compatibility level, BACKWARD (Apicurio starts with
NONE). Healthy means ``GET /subjects``
answers 200 with a JSON list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .common import (
    CACHE,
    JVM_BASE_OPTS,
    STACK_DIR,
    ComponentUnavailable,
    ManagedProcess,
    Readiness,
    cache_lock,
    free_port,
    java,
    spawn,
    tail,
    wait_until,
)

APICURIO_VERSION = "3.0.9"
APICURIO_ARTIFACT = f"io.apicurio:apicurio-registry-app:{APICURIO_VERSION}:tar.gz:all"
APICURIO_HOME = CACHE / "registry" / f"apicurio-{APICURIO_VERSION}"
APICURIO_HEAP = ("-Xms128m", "-Xmx512m")

AXONOPS_VERSION = "v0.2.1"  # keep equal to the require line in tests/stack/axonops/go.mod
AXONOPS_MODULE_DIR = STACK_DIR / "axonops"
AXONOPS_BINARY = CACHE / "bin" / f"axonops-schema-registry-{AXONOPS_VERSION}"
AXONOPS_PACKAGE = "github.com/axonops/axonops-schema-registry/cmd/schema-registry"

START_TIMEOUT = 240.0  # only a hang takes longer, even on a slow machine


@dataclass(frozen=True)
class Registry:
    """A running registry: ``url`` is the base URL of its Confluent-compatible API."""

    impl: str
    url: str
    process: ManagedProcess
    workdir: Path

    @property
    def log(self) -> Path:
        return self.process.log

    def stop(self) -> None:
        self.process.stop()


# --- obtaining ---------------------------------------------------------------------------------


def apicurio_resolved() -> bool:
    return (APICURIO_HOME / ".resolved").is_file()


def apicurio_home() -> Path:
    """The unpacked Apicurio distribution, fetched with mvn on first use."""
    if apicurio_resolved():
        return APICURIO_HOME
    with cache_lock("apicurio"):
        if apicurio_resolved():
            return APICURIO_HOME
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ComponentUnavailable("registry", "`mvn` is not on PATH; install Maven 3.8+")
        download = APICURIO_HOME.with_name(APICURIO_HOME.name + ".download")
        shutil.rmtree(download, ignore_errors=True)
        log = CACHE / "logs" / "mvn-apicurio.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        base = [
            mvn,
            "-B",
            "dependency:copy",
            f"-Dartifact={APICURIO_ARTIFACT}",
            f"-DoutputDirectory={download}",
        ]
        for attempt in (["-o"], []):
            with open(log, "w") as out:
                done = subprocess.run(
                    base + attempt, stdout=out, stderr=subprocess.STDOUT, cwd=STACK_DIR, check=False
                )
            if done.returncode == 0:
                break
        else:
            raise ComponentUnavailable(
                "registry", f"mvn could not fetch {APICURIO_ARTIFACT}", log_tail=tail(log)
            )
        shutil.rmtree(APICURIO_HOME, ignore_errors=True)
        APICURIO_HOME.mkdir(parents=True)
        for archive in download.glob("*.tar.gz"):
            with tarfile.open(archive) as tar:
                tar.extractall(APICURIO_HOME, filter="data")
        shutil.rmtree(download, ignore_errors=True)
        if not list(APICURIO_HOME.glob("*-runner.jar")):
            raise ComponentUnavailable("registry", f"no *-runner.jar in {APICURIO_HOME}")
        (APICURIO_HOME / ".resolved").write_text(APICURIO_ARTIFACT)
    return APICURIO_HOME


def axonops_binary() -> Path:
    """The AxonOps registry executable, built with the Go toolchain on first use."""
    if AXONOPS_BINARY.is_file():
        return AXONOPS_BINARY
    with cache_lock("axonops"):
        if AXONOPS_BINARY.is_file():
            return AXONOPS_BINARY
        go = shutil.which("go")
        if go is None:
            raise ComponentUnavailable(
                "registry", "`go` is not on PATH; install Go 1.26+ to build the AxonOps registry"
            )
        AXONOPS_BINARY.parent.mkdir(parents=True, exist_ok=True)
        partial = AXONOPS_BINARY.with_name(AXONOPS_BINARY.name + ".partial")
        log = CACHE / "logs" / "go-build-axonops.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0"}
        with open(log, "w") as out:
            done = subprocess.run(
                [go, "build", "-o", str(partial), AXONOPS_PACKAGE],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=AXONOPS_MODULE_DIR,
                env=env,
                check=False,
            )
        if done.returncode != 0:
            raise ComponentUnavailable(
                "registry",
                f"go build of {AXONOPS_PACKAGE}@{AXONOPS_VERSION} failed",
                log_tail=tail(log),
            )
        partial.rename(AXONOPS_BINARY)
    return AXONOPS_BINARY


def probe_axonops() -> Readiness:
    if AXONOPS_BINARY.is_file():
        return Readiness(True, f"AxonOps Schema Registry {AXONOPS_VERSION} built")
    if shutil.which("go"):
        return Readiness(True, f"AxonOps Schema Registry {AXONOPS_VERSION} will be built with go")
    return Readiness(False, "AxonOps binary not built and `go` not on PATH")


def obtain(impl: str) -> Path:
    """Fetch or build ``impl`` into the cache without starting it (scripts/ci-setup)."""
    return apicurio_home() if impl == "apicurio" else axonops_binary()


# --- running -----------------------------------------------------------------------------------


def subjects_answer(url: str) -> bool:
    """True when GET {url}/subjects answers 200 with JSON.

    Confluent answers ``[]`` on an empty registry; AxonOps v0.2.1 answers ``null``.
    """
    with urllib.request.urlopen(f"{url}/subjects", timeout=2) as response:
        body = json.load(response)
        return response.status == 200 and (body is None or isinstance(body, list))


def set_global_compatibility(url: str, level: str) -> None:
    """PUT {url}/config: Apicurio starts with NONE, Confluent (and AxonOps) with BACKWARD."""
    request = urllib.request.Request(
        f"{url}/config",
        method="PUT",
        data=json.dumps({"compatibility": level}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        answer = json.load(response)
    if answer.get("compatibility", answer.get("compatibilityLevel")) != level:
        raise ComponentUnavailable("registry", f"PUT {url}/config answered {answer}")


def start_registry(
    impl: str, workdir: Path, *, detach: bool = False, port: int | None = None
) -> Registry:
    """Start registry ``impl`` (apicurio|axonops) on a free loopback port; return once healthy.

    Raises ComponentUnavailable (with the log tail) if it cannot be obtained or started.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    log = workdir / f"{impl}.log"
    if impl == "apicurio":
        runner = next(apicurio_home().glob("*-runner.jar"))
        argv = [
            java(),
            *APICURIO_HEAP,
            *JVM_BASE_OPTS,
            "-Djava.awt.headless=true",
            f"-Dquarkus.http.port={port}",
            "-Dquarkus.http.host=127.0.0.1",
            "-Dapicurio.rules.global.compatibility=BACKWARD",
            # Confluent finds a schema by its canonical form; Apicurio compares raw text unless
            # told otherwise (AvroSerializer's lookup of a registered schema fails without it).
            "-Dapicurio.ccompat.use-canonical-hash=true",
            "-jar",
            str(runner),
        ]
        url = f"http://127.0.0.1:{port}/apis/ccompat/v7"
        env: dict[str, str] = {}
    elif impl == "axonops":
        argv = [str(axonops_binary())]
        url = f"http://127.0.0.1:{port}"
        env = {
            "SCHEMA_REGISTRY_HOST": "127.0.0.1",
            "SCHEMA_REGISTRY_PORT": str(port),
            "SCHEMA_REGISTRY_STORAGE_TYPE": "memory",
            "SCHEMA_REGISTRY_COMPATIBILITY_LEVEL": "BACKWARD",
            "SCHEMA_REGISTRY_LOG_LEVEL": "info",
        }
    else:
        raise ComponentUnavailable(
            "registry", f"unknown registry implementation {impl!r}; use apicurio or axonops"
        )
    process = spawn(impl, argv, log=log, cwd=workdir, env=env, detach=detach)
    try:
        wait_until(
            "registry",
            lambda: subjects_answer(url),
            process=process,
            timeout=START_TIMEOUT,
            what=f"answering GET {url}/subjects",
        )
        set_global_compatibility(url, "BACKWARD")
    except BaseException:
        process.stop()
        raise
    return Registry(impl, url, process, workdir)
