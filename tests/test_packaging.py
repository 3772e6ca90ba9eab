"""``pip install .`` ships every sub-package: setup.cfg lists the packages by hand (the repository
root is the package, ``package_dir = solvergym = .``, which ``find:`` cannot walk), so a new
folder must be added there; ``solvergym.evaluation`` was once missing and only an editable
install worked."""
import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_setup_cfg_lists_every_package_folder():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = {p.strip() for p in cfg["options"]["packages"].split("\n") if p.strip()}
    folders = {".".join(("solvergym",) + f.parent.relative_to(ROOT).parts) for f in ROOT.rglob("__init__.py")
               if not ({"tests", "build", "docs"} & set(f.relative_to(ROOT).parts))
               and not any(p.startswith(".") for p in f.relative_to(ROOT).parts)}
    assert listed == folders, {"missing": sorted(folders - listed), "not a folder": sorted(listed - folders)}
