"""What a captured program launched each variant with (grid, each tensor's dtype, shape and strides, each
scalar's value) is shown wherever the variant is (issue 43): vec-report's details, `ls --launches`, the
report and vec-report/capture --json, from the record the capture wrote."""

import json


from tests.helpers import run

# conftest.CAPTURED_PROGRAM: row_sum[(7,)](x, s, 100, x.stride(0), BLOCK=64) twice, x = torch.randn(7, 100)
ROW_SUM = "2× grid (7, 1, 1): x_ptr float32[7x100] strides (100, 1), out_ptr float32[7] strides (1,), n_cols=100, " \
          "stride=100, BLOCK=64"


def _row(store, kernel="row_sum") -> str:
    """The ls row number of the row_sum variant launched with the aligned tensor."""
    lines = run("ls", store).output.splitlines()
    return next(line.split()[0] for line in lines if f" {kernel} " in line and "(x_ptr aligned)" in line)


def test_launch_arguments_in_vec_report_ls_report_and_json(interpreted_capture, tmp_path):
    store, _, captured = interpreted_capture
    row = _row(store)
    r = run("vec-report", row, "--store", store)
    assert r.exit_code == 0, r.output
    assert f"  launches {ROW_SUM}" in r.output.splitlines()
    listed = run("ls", store, "--launches")
    assert listed.exit_code == 0 and f"       {ROW_SUM}" in listed.output.splitlines(), listed.output
    assert "(no launches recorded)" in listed.output     # the autotuner's config the program never launched
    page = tmp_path / "r.html"
    assert run("report", store, "-o", page).exit_code == 0
    assert f"<h3>Launches</h3><ul class=\"launches mono\"><li>{ROW_SUM}</li>" in page.read_text()
    found = json.loads(run("vec-report", row, "--store", store, "--json").stdout)[0]["launches"]
    top = max(found["signatures"], key=lambda s: s["calls"])
    assert top["grid"] == [7, 1, 1] and top["calls"] == 2
    x = top["args"][0]
    assert (x["name"], x["dtype"], x["shape"], x["strides"]) == ("x_ptr", "float32", [7, 100], [100, 1])
    by_kernel = [v for v in captured["variants"] if v["kernel"] == "row_sum" and v["launches"]]
    assert any(s["args"] == top["args"] for v in by_kernel for s in v["launches"]["signatures"])
