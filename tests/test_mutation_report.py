"""tools/mutation_report.py: the per-module table of `make mutation`."""

from tools.mutation_report import equivalent, module, parse, table


def test_parse_module_and_table(tmp_path):
    text = """    helpers.bench.x_measure__mutmut_1: killed
    helpers.bench.x_measure__mutmut_2: survived
    helpers.bench.xǁResultǁratio__mutmut_1: timeout
    helpers.bench.x_compare__mutmut_9: survived
    helpers.doctor.x_main__mutmut_3: not checked
    noise line without a mutant"""
    results = parse(text)
    assert results["helpers.bench.x_measure__mutmut_2"] == "survived" and len(results) == 5
    assert module("helpers.bench.xǁResultǁratio__mutmut_1") == "helpers.bench"
    (tmp_path / "eq.txt").write_text("# comment\nhelpers.bench.x_compare__mutmut_9  equivalent: colour case\n")
    equiv = equivalent(tmp_path / "eq.txt")
    assert equiv == {"helpers.bench.x_compare__mutmut_9": "equivalent: colour case"}
    rows, scores = table(results, equiv)
    assert scores == {"helpers.bench": 2 / 3}  # killed + timeout over mutants less equivalents; doctor: not selected
    assert "| helpers.bench | 4 | 1 | 1 | 1 | 1 | 0 | 67% |" in rows.splitlines()
    assert equivalent(tmp_path / "missing.txt") == {}
