"""Every figure's shared style (ead.plots.style): distinct line styles so equal series stay visible, axes kept to what
their quantity can take, whole-number ticks for counts, and the PNG + PDF pair written whole or not at all."""

import pytest

from ead.plots.style import bound_axis, integer_ticks, plt, save_figure, series_styles  # style selects Agg first


def test_every_series_of_a_panel_gets_its_own_line_style_and_marker():
    styles = series_styles([f"s{i}" for i in range(6)])
    assert len({(str(style["ls"]), style["marker"]) for style in styles.values()}) == 6


@pytest.mark.parametrize(("data", "options", "limits"), [
    ([0.0, 0.0], {"floor": 0.0}, lambda low, high: low == 0.0 and high > 0.0),  # an all-zero curve: nothing below 0
    ([0.99, 1.0], {"floor": 0.0, "ceiling": 1.0}, lambda low, high: high == 1.0 and low < 0.99),  # a rate at 1
    ([3.58, 3.59], {"min_span": 0.5}, lambda low, high: high - low == pytest.approx(0.5)),  # no stretched noise
])
def test_an_axis_keeps_to_its_quantitys_bounds_and_an_honest_span(data, options, limits):
    fig, ax = plt.subplots()
    ax.plot([0, 1], data)
    bound_axis(ax, "y", **options)
    assert limits(*ax.get_ylim()), ax.get_ylim()
    plt.close(fig)


def test_counts_get_whole_number_ticks():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [0, 1, 0])
    integer_ticks(ax.xaxis)
    fig.canvas.draw()
    assert all(float(tick).is_integer() for tick in ax.get_xticks())
    plt.close(fig)


def test_a_figure_is_written_as_a_whole_png_and_pdf_pair_or_not_at_all(tmp_path, monkeypatch):
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    save_figure(fig, str(tmp_path / "f.png"), str(tmp_path / "f.pdf"))
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "f.pdf").read_bytes()[:5] == b"%PDF-"
    fig, ax = plt.subplots()
    monkeypatch.setattr(fig, "savefig", lambda *args, **kwargs: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError, match="disk full"):
        save_figure(fig, str(tmp_path / "g.png"), str(tmp_path / "g.pdf"))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["f.pdf", "f.png"]  # no half-written file left
