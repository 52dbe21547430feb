"""Build a wheelhouse: every wheel the lessons need (the library ``mrtr-kit``, the course
``mrtr-course`` beside it, and all they depend on), for several platforms, so that a
room without network can install the lessons (``python3 tools/kit.py lab --offline PATH``).

Run by ``python3 tools/kit.py wheelhouse PATH [--platform NAME ...] [--python X.Y ...]``, which
starts it in a throwaway venv holding a recent pip and ``packaging`` (this script needs both; kit.py
itself stays standard-library only). Network to the package index is needed here, and only here.

Only pip's public command line fetches: ``pip download --only-binary=:all: --platform ...
--python-version ... --implementation cp``. pip evaluates environment markers
(``pywinpty; os_name == 'nt'``, ``appnope; platform_system == 'Darwin'``) for the machine it
runs on, not for ``--platform``, so after each download this script reads the wheels' own
``Requires-Dist``, evaluates each marker for the target, fetches what the target needs and
pip left out, and leaves out of that target's list what only this machine needed. A package
with no wheel at all for a target is built from its sdist with ``pip wheel`` when the result is
pure Python (``py3-none-any``); otherwise the target is reported as lacking it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from datetime import date
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

ROOT = Path(__file__).resolve().parent.parent

# Each platform: pip's --platform tags, most specific first, and its marker values.
# manylinux_2_28 (glibc 2.28: Debian 10, Ubuntu 20.04, RHEL 8 and newer), not 2_34: a room's
# older Linux laptops still install it; on x86-64 and on ARM (aarch64: Linux on ARM laptops,
# Raspberry Pi 4/5, ARM virtual machines). macOS 12 and newer, on Apple silicon and on Intel
# (pip adds the older macOS and universal2 tags itself).
PLATFORMS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "linux-x86_64": (
        ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "linux_x86_64"),
        {"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux"},
    ),
    "linux-aarch64": (
        (
            "manylinux_2_28_aarch64",
            "manylinux_2_17_aarch64",
            "manylinux2014_aarch64",
            "linux_aarch64",
        ),
        {"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux"},
    ),
    "macos-arm64": (
        ("macosx_12_0_arm64",),
        {"os_name": "posix", "sys_platform": "darwin", "platform_system": "Darwin"},
    ),
    "macos-x86_64": (
        ("macosx_12_0_x86_64",),
        {"os_name": "posix", "sys_platform": "darwin", "platform_system": "Darwin"},
    ),
    "windows-x86_64": (
        ("win_amd64",),
        {"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows"},
    ),
}
MACHINE = {
    "linux-x86_64": "x86_64",
    "linux-aarch64": "aarch64",
    "macos-arm64": "arm64",
    "macos-x86_64": "x86_64",
    "windows-x86_64": "AMD64",
}
THIS = "this"  # the interpreter running kit.py: no --platform, pip's own tags and markers
# requires-python is ">=3.11" with no upper bound: these are the releases a room may have.
PYTHONS = ("3.11", "3.12", "3.13", "3.14")


@dataclass
class Target:
    platform: str
    python: str
    files: set[str] = field(default_factory=set)
    built: set[str] = field(default_factory=set)  # built here from an sdist (pure Python)
    missing: list[str] = field(default_factory=list)  # no wheel for this target
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return f"{self.platform} cp{self.python.replace('.', '')}"


def pip_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]


def target_flags(target: Target) -> list[str]:
    if target.platform == THIS:
        return []
    tags, _ = PLATFORMS[target.platform]
    flags = [f"--platform={tag}" for tag in tags]
    return [*flags, f"--python-version={target.python}", "--implementation=cp"]


def marker_environment(target: Target) -> dict[str, str] | None:
    """The marker values of the target; None for THIS (packaging's defaults are this machine)."""
    if target.platform == THIS:
        return None
    _, values = PLATFORMS[target.platform]
    return {
        **values,
        "platform_machine": MACHINE[target.platform],
        "platform_python_implementation": "CPython",
        "implementation_name": "cpython",
        "python_version": target.python,
        "python_full_version": f"{target.python}.0",
        "implementation_version": f"{target.python}.0",
    }


def holds(marker: Marker | None, env: dict[str, str] | None, extra: str = "") -> bool:
    if marker is None:
        return True
    return marker.evaluate({**(env or {}), "extra": extra})


def requirements_of(wheel: Path) -> list[Requirement]:
    with zipfile.ZipFile(wheel) as whl:
        name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        headers = HeaderParser().parsestr(whl.read(name).decode("utf-8"))
    return [Requirement(line) for line in headers.get_all("Requires-Dist") or []]


def closure(root: Requirement, dest: Path, files: set[str], env: dict[str, str] | None):
    """What the target needs, walking Requires-Dist from ``root`` with the target's markers:
    (the files it uses, the requirements no file of ``files`` satisfies yet)."""
    by_name = {canonicalize_name(parse_wheel_filename(f)[0]): f for f in files}
    needed: dict[str, set[str]] = {}  # name -> extras asked for
    queue = [root]
    used: set[str] = set()
    absent: list[Requirement] = []
    while queue:
        req = queue.pop()
        name = canonicalize_name(req.name)
        if name in needed and req.extras <= needed[name]:
            continue
        needed.setdefault(name, set()).update(req.extras)
        if name not in by_name:
            absent.append(req)
            continue
        used.add(by_name[name])
        for dep in requirements_of(dest / by_name[name]):
            if any(holds(dep.marker, env, extra) for extra in ("", *needed[name])):
                queue.append(dep)
    return used, absent


def download(target: Target, dest: Path, reqs: list[str]) -> tuple[int, str]:
    command = pip_command(
        "download", "--only-binary=:all:", *target_flags(target), "--find-links", str(dest),
        "--dest", str(dest), *reqs,
    )  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        found = re.search(r"(?:Saved|File was already downloaded) (\S+\.whl)$", line.strip())
        if found:
            target.files.add(Path(found[1]).name)
    return done.returncode, done.stdout + done.stderr


def build_from_sdist(requirement: str, dest: Path) -> str | None:
    """``pip wheel`` from the sdist; the wheel's name if it is pure Python, else None."""
    with tempfile.TemporaryDirectory() as tmp:
        command = pip_command("wheel", "--no-deps", "--no-binary=:all:", "-w", tmp, requirement)
        if subprocess.run(command, capture_output=True).returncode != 0:
            return None
        (wheel,) = Path(tmp).glob("*.whl")
        if not wheel.name.endswith("-none-any.whl"):
            return None
        shutil.copy(wheel, dest / wheel.name)
        return wheel.name


def fetch(target: Target, dest: Path, roots: list[str], root_reqs: list[Requirement]) -> None:
    started = time.monotonic()
    env = marker_environment(target)
    reqs = list(roots)
    tried: set[str] = set()
    for _ in range(8):  # each pass adds what the markers of the last one asked for
        target.files = set(target.built)  # this pass's resolution alone, as pip reports it
        code, output = download(target, dest, reqs)
        if code != 0:
            found = re.search(r"No matching distribution found for (\S+)", output)
            if found is None:
                raise SystemExit(f"pip download failed for {target.name}:\n{output[-2000:]}")
            wanted = found[1]
            built = None if wanted in tried else build_from_sdist(wanted, dest)
            tried.add(wanted)
            if built is None:  # compiled, or no sdist: this target cannot have it
                target.missing.append(wanted)
                break
            target.built.add(built)
            target.files.add(built)
            continue
        used, absent = set(), []
        for root_req in root_reqs:
            more, lacking = closure(root_req, dest, target.files, env)
            used |= more
            absent += [req for req in lacking if req not in absent]
        if not absent:
            target.files = used  # without what only this machine's markers asked for
            break
        added = [str(req).split(";")[0] for req in absent]  # its marker held for the target
        reqs += [req for req in dict.fromkeys(added) if req not in reqs]
    target.seconds = time.monotonic() - started


def size(dest: Path, names: set[str]) -> int:
    return sum((dest / name).stat().st_size for name in names)


def megabytes(n: int) -> str:
    return f"{n / 1e6:.0f} MB"


README = """\
mrtr-kit wheelhouse: every package the lessons need, for installing without network
==================================================================================

Built {day} from mrtr-kit {version} by `python3 tools/kit.py wheelhouse`.
Holds {holds} and their whole dependency tree, the kit's and the course's own wheels, pip and
setuptools (the kit installs both from the clone, editable, which needs setuptools).

{table}

This folder also holds the kit's repository: mrtr-kit.bundle (a `git bundle`, with its
history) and mrtr-kit.zip (the same commit, for a laptop without git). Copy this whole folder
to a USB stick (or a shared drive); nothing else is needed but Python 3.11 or newer. Build it
again after pulling a kit version whose pyproject.toml changed: the wheels match that file's
requirements (`kit.py wheelhouse PATH --bundle-only` refreshes the repository copies alone).

Learner: copy the folder to your laptop (say to ~/wheelhouse), then, with git installed,

    git clone ~/wheelhouse/mrtr-kit.bundle mrtr-kit
    cd mrtr-kit
    python3 tools/kit.py lab --offline ~/wheelhouse
    (Windows: git clone %USERPROFILE%\\wheelhouse\\mrtr-kit.bundle mrtr-kit, then
     py tools\\kit.py lab --offline %USERPROFILE%\\wheelhouse)

Without git: unpack mrtr-kit.zip (it holds a mrtr-kit folder) and run the same `kit.py lab`
line in that folder. `lab --offline` creates .venv/ and installs from this folder alone (pip
--no-index --find-links), with no network, then opens JupyterLab. After that,
`python3 tools/kit.py lab` starts at once as usual. `python3 tools/kit.py install --offline
PATH` installs again the same way, without starting the lab. Your Python must be one of the
versions above, on one of the platforms above.

A lesson you have wrecked: `python3 tools/kit.py reset 01` restores lesson 01 as committed and
keeps your copy in notebooks/saved/ (in the clone; in the unpacked zip add
`--from ~/wheelhouse`). No network is needed for any of this.
"""


def main() -> int:
    parser = argparse.ArgumentParser(prog="kit.py wheelhouse", description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="the folder to fill (created if absent)")
    parser.add_argument(
        "--platform",
        action="append",
        choices=[*PLATFORMS, THIS],
        help=f"repeatable; default: {', '.join(PLATFORMS)}; '{THIS}': this machine's Python only",
    )
    parser.add_argument(
        "--python", action="append", choices=PYTHONS, help=f"default: {', '.join(PYTHONS)}"
    )
    parser.add_argument("--test", action="store_true", help="the test tools too (mrtr-kit[test])")
    options = parser.parse_args()
    dest = options.path.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    extras = "course,test" if options.test else "course"
    holds = "mrtr-course, mrtr-kit[test]" if options.test else "mrtr-course and mrtr-kit"
    started = time.monotonic()

    # The kit's and the course's own wheels, built from copies of the clone (the checkout gets
    # no build/).
    ignore = shutil.ignore_patterns("__pycache__")
    with tempfile.TemporaryDirectory() as tmp:
        kit_src, course_src = Path(tmp) / "mrtr-kit", Path(tmp) / "mrtr-course"
        kit_src.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy(ROOT / name, kit_src / name)
        shutil.copytree(ROOT / "mrtr_kit", kit_src / "mrtr_kit", ignore=ignore)
        course_src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / "course" / name, course_src / name)
        shutil.copytree(ROOT / "course" / "mrtr_course", course_src / "mrtr_course", ignore=ignore)
        for old in [*dest.glob("mrtr_kit-*.whl"), *dest.glob("mrtr_course-*.whl")]:
            old.unlink()
        for src in (kit_src, course_src):
            build = pip_command("wheel", "--no-deps", "-q", "-w", str(dest), str(src))
            subprocess.run(build, check=True)
    (kit_wheel,) = dest.glob("mrtr_kit-*.whl")
    (course_wheel,) = dest.glob("mrtr_course-*.whl")
    roots = [str(course_wheel), *([f"{kit_wheel}[test]"] if options.test else [str(kit_wheel)])]
    kit_req = "mrtr-kit[test]" if options.test else "mrtr-kit"
    root_reqs = [Requirement("mrtr-course"), Requirement(kit_req)]
    # What installing the clone itself needs: pip, and the build backend for `pip install -e .`.
    tools = ["pip", "setuptools>=77"]
    subprocess.run(
        pip_command("download", "--only-binary=:all:", "--no-deps", "-q", "-d", str(dest), *tools),
        check=True,
    )
    common = {p.name for p in dest.glob("*.whl") if p.name.startswith(("pip-", "setuptools-"))}

    platforms = options.platform or list(PLATFORMS)
    pythons = options.python or list(PYTHONS)
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    targets = [
        Target(p, here if p == THIS else v)
        for p in platforms
        for v in ([here] if p == THIS else pythons)
    ]
    for target in targets:
        print(f"[wheelhouse] {target.name} ...", flush=True)
        fetch(target, dest, roots, root_reqs)
        target.files |= common
        state = f"missing {', '.join(target.missing)}" if target.missing else "complete"
        print(
            f"[wheelhouse] {target.name}: {len(target.files)} wheels, "
            f"{megabytes(size(dest, target.files))}, {state} ({target.seconds:.0f} s)",
            flush=True,
        )
    # Files no target uses: what only this machine's markers asked for.
    used = set().union(*(t.files for t in targets))
    for path in dest.glob("*.whl"):
        if path.name not in used:
            path.unlink()

    rows = ["platform         Pythons                  size     notes"]
    summary = []
    for platform in platforms:
        mine = [t for t in targets if t.platform == platform]
        files = set().union(*(t.files for t in mine))
        ok = [t.python for t in mine if not t.missing]
        notes = "; ".join(
            f"cp{t.python}: no wheel for {', '.join(t.missing)}" for t in mine if t.missing
        )
        shown = megabytes(size(dest, files))
        rows.append(f"{platform:<16} {', '.join(ok) or 'none':<24} {shown:>7}  {notes}")
        summary.append(
            {"platform": platform, "pythons": ok, "bytes": size(dest, files), "files": len(files),
             "missing": {t.python: t.missing for t in mine if t.missing}}
        )  # fmt: skip
    total = size(dest, {p.name for p in dest.glob("*.whl")})
    built = sorted(set().union(*(t.built for t in targets)))
    rows.append(f"{'all':<16} {'':<24} {megabytes(total):>7}")
    rows.append(
        "Built here from an sdist (pure Python, no wheel published): "
        + (", ".join(built) or "none")
    )
    version = kit_wheel.name.split("-")[1]
    table = "\n".join(row.rstrip() for row in rows)
    text = README.format(day=date.today(), version=version, holds=holds, table=table)
    (dest / "README.txt").write_text(text, encoding="utf-8")
    record = {
        "extras": extras,
        "total_bytes": total,
        "built_from_sdist": built,
        "platforms": summary,
    }
    (dest / "wheelhouse.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(table, flush=True)
    print(f"[wheelhouse] {dest} ready after {time.monotonic() - started:.0f} s; see its README.txt")
    return 1 if any(t.missing for t in targets) else 0


if __name__ == "__main__":
    sys.exit(main())
