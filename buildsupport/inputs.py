"""The build's inputs, fetched into a cache outside the repository and checked before use: the
Pyodide npm tarball and the pure wheels against build.lock.json, the compiled Pyodide wheels
against Pyodide's own lock file. The second build runs offline."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from .common import PYODIDE_CDN, BuildError, log, sha256_bytes, sha256_file, write_atomic


def wheel_dirs(given=()) -> list[str]:
    """Folders to look in for the compiled wheels: those given, then $KV_EXPLORABLE_PYODIDE_WHEELS."""
    return [*given, *(d for d in os.environ.get("KV_EXPLORABLE_PYODIDE_WHEELS", "").split(os.pathsep) if d)]


def pip_command() -> list[str]:
    """pip to download wheels with: the running interpreter's, else `pip` on PATH, else uv's."""
    try:
        import pip  # noqa: F401

        return [sys.executable, "-m", "pip"]
    except ImportError:
        pass
    for exe in ("pip3", "pip"):
        if shutil.which(exe):
            return [exe]
    if shutil.which("uv"):
        return ["uv", "run", "--no-project", "--with", "pip", "python", "-m", "pip"]
    raise BuildError("pip not found: install pip (python -m ensurepip) to let the build download wheels.")


def run_tool(cmd: list[str], cwd: Path, what: str, fix: str) -> None:
    """Run npm or pip quietly; a failure becomes a BuildError with the tool's last words and the fix."""
    try:
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except (OSError, subprocess.CalledProcessError) as e:
        err = getattr(e, "stderr", "") or e
        raise BuildError(f"{what} failed ({str(err).strip()[-300:]}). {fix}") from e


def npm_pack(version: str, dest: Path) -> Path:
    """`npm pack pyodide@VERSION` into dest: Pyodide's runtime as npm publishes it."""
    run_tool(
        ["npm", "pack", f"pyodide@{version}", "--silent"],
        dest,
        f"`npm pack pyodide@{version}`",
        "Install Node.js/npm, or copy the tarball into the build cache's downloads/ folder.",
    )
    return dest / f"pyodide-{version}.tgz"


def pip_download(specs: list[str], dest: Path) -> None:
    """`pip download --no-deps` of exact versions into dest: the wheels as PyPI publishes them."""
    run_tool(
        pip_command()
        + [
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(dest),
            *specs,
        ],
        dest,
        f"`pip download {' '.join(specs)}`",
        "Copy the wheel into the build cache's downloads/ folder.",
    )


class Inputs:
    """The cache folder and where each input comes from."""

    def __init__(self, cache: Path, pyodide_version: str, extra_wheel_dirs=(), cdn: str = PYODIDE_CDN):
        self.cache = Path(cache).expanduser().resolve()
        self.version = pyodide_version
        self.downloads = self.cache / "downloads"
        self.compiled_dir = self.cache / f"pyodide-{pyodide_version}"
        self.derived = self.cache / "derived"
        self.extra_wheel_dirs = [Path(d).expanduser() for d in extra_wheel_dirs if d]
        self.cdn = cdn.format(version=pyodide_version)
        self.cdn_failure: str | None = None  # after one network failure, the other files are not tried

    @staticmethod
    def check(path: Path, expected: str, how: str) -> Path:
        actual = sha256_file(path)
        if actual != expected:
            raise BuildError(
                f"{path.name}: sha256 mismatch for {path}\n"
                f"  expected {expected}\n  found    {actual}\n"
                f"  The file is corrupt or not the recorded one. {how}"
            )
        return path

    def _fetched(self, name: str, expected_sha: str | None, fetch) -> Path:
        """The cached download `name` (checked), else fetch(tmpdir) -> file, checked, then cached."""
        path = self.downloads / name
        if path.is_file():
            return (
                self.check(path, expected_sha, f"Delete {path} and build again to download it.")
                if expected_sha
                else path
            )
        self.downloads.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.downloads) as tmp:
            got = fetch(Path(tmp))
            if not got.is_file():
                raise BuildError(
                    f"{name}: the download gave {sorted(os.listdir(tmp))} instead; copy the file to {path}."
                )
            if expected_sha:
                self.check(
                    got,
                    expected_sha,
                    "The registry returned another file; if the version is meant to "
                    "change, run `python build.py --update-lock`.",
                )
            os.replace(got, path)
        return path

    def npm_tarball(self, expected_sha: str) -> Path:
        def download(tmp: Path) -> Path:
            log(f"fetching pyodide-{self.version}.tgz with npm pack")
            return npm_pack(self.version, tmp)

        return self._fetched(f"pyodide-{self.version}.tgz", expected_sha, download)

    def pure_wheel(self, filename: str, expected_sha: str | None) -> Path:
        name, version = filename.split("-")[:2]

        def download(tmp: Path) -> Path:
            log(f"fetching {filename} with pip download")
            pip_download([f"{name}=={version}"], tmp)
            return tmp / filename

        return self._fetched(filename, expected_sha, download)

    # -- compiled wheels: not on PyPI nor npm ------------------------------------------------

    def compiled_wheels(self, entries: dict[str, dict]) -> dict[str, Path]:
        """name -> checked path for entries of Pyodide's lock: from the cache or the folders given,
        else downloaded from the Pyodide CDN. Stops with one BuildError naming every file missing."""
        found: dict[str, Path] = {}
        missing: dict[str, str] = {}
        for name, entry in entries.items():
            filename, sha = entry["file_name"], entry["sha256"]
            got = self._local_compiled(filename, sha)
            if got is None:
                got = self._download_compiled(filename, sha)
            if isinstance(got, Path):
                found[name] = got
            else:
                missing[filename] = got
        if missing:
            raise BuildError(self._missing_message(missing, entries))
        return found

    def _local_compiled(self, filename: str, sha: str) -> Path | None:
        for place in [self.compiled_dir, *self.extra_wheel_dirs]:
            path = place / filename
            if path.is_file():
                self.check(path, sha, f"Replace it with the official file {self.cdn}{filename} (sha256 {sha}).")
                if place != self.compiled_dir:  # keep a copy: the next build needs no folder
                    self.compiled_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, self.compiled_dir / filename)
                return self.compiled_dir / filename
        return None

    def _download_compiled(self, filename: str, sha: str) -> Path | str:
        """Fetch a compiled wheel from the Pyodide CDN, as readers' browsers do, checked against
        Pyodide's lock file. The Path on success, else why not."""
        if os.environ.get("KV_EXPLORABLE_OFFLINE"):
            return "not downloaded: KV_EXPLORABLE_OFFLINE is set"
        if self.cdn_failure:
            return f"not downloaded: {self.cdn_failure}"
        log(f"fetching {filename} from the Pyodide CDN")
        try:
            with urllib.request.urlopen(self.cdn + filename, timeout=20) as r:
                data = r.read()
        except OSError as e:
            self.cdn_failure = f"downloading from the Pyodide CDN failed ({type(e).__name__}: {e})"
            return self.cdn_failure
        if sha256_bytes(data) != sha:
            return f"{self.cdn}{filename} is not the file in Pyodide's lock (sha256 mismatch)"
        return write_atomic(self.compiled_dir / filename, data)

    def _missing_message(self, missing: dict[str, str], entries: dict[str, dict]) -> str:
        shas = {e["file_name"]: e["sha256"] for e in entries.values()}
        files = "\n".join(f"  {f}: missing ({why}); sha256 {shas[f]}" for f, why in missing.items())
        looked = "\n".join(f"  {p}/" for p in [self.compiled_dir, *self.extra_wheel_dirs])
        return (
            f"{len(missing)} compiled Pyodide wheel(s) missing. Pyodide builds them; pip and npm cannot "
            f"fetch them.\n{files}\nLooked in:\n{looked}\n"
            f"Supply them: download each from {self.cdn}<file> into {self.compiled_dir}/, or pass "
            f"--pyodide-wheels DIR (or set KV_EXPLORABLE_PYODIDE_WHEELS) to a folder that holds them. "
            f"Or build with --cdn, which loads them from the Pyodide CDN."
        )
