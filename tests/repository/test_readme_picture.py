"""The README's first picture (docs/img/annealing_schedule.png, tools/readme_picture.py) is committed, so it renders
on a fresh clone, and is current: it records the digest of the schedule table it was drawn from, which equals the
table the current code and default config give."""

from pathlib import Path

from PIL import Image

from tests.conftest import load_tool

ROOT = Path(__file__).resolve().parents[2]
readme_picture = load_tool("readme_picture")


def test_the_readme_links_the_committed_picture_and_it_shows_the_current_schedule():
    picture = readme_picture.PICTURE
    assert picture.is_file(), "run `python tools/readme_picture.py`"
    assert f"]({picture.relative_to(ROOT).as_posix()})" in (ROOT / "README.md").read_text()
    recorded = Image.open(picture).text.get(readme_picture.DIGEST_KEY)
    table = readme_picture.current_table()
    assert recorded == readme_picture.table_digest(table), "stale: rerun `python tools/readme_picture.py`"
    assert set(table["decay_d"]) == {25.0, 100.0, 200.0, 400.0, 800.0} and table["tau"].max() <= 1.2


def test_the_digest_sees_a_changed_schedule():
    table = readme_picture.current_table()
    changed = table.assign(tau=table["tau"].where(table.index != 5, table["tau"] + 1e-12))
    assert readme_picture.table_digest(changed) != readme_picture.table_digest(table)
