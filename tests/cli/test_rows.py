"""A row number of `kinspect ls STORE` names that variant in every command that takes one (issue 43):
vec-report, report and diff as show, repro and bench did; a number beyond the store's rows is still the
one-line mistake it was (a value meant for -p)."""


from tests.helpers import one_error_line, run


def _rows(store) -> dict[str, str]:
    """ls row number -> variant folder name."""
    lines = run("ls", store).output.splitlines()[2:]
    return {line.split()[0]: line.split()[-1] for line in lines if line.split() and line.split()[0].isdigit()}


def test_vec_report_report_and_diff_take_ls_row_numbers(interpreted_capture, tmp_path):
    store, _, _ = interpreted_capture
    rows = _rows(store)
    assert len(rows) >= 5          # the capture's five; tests that ran before may have added to the shared store
    r = run("vec-report", "3", "--store", store)
    assert r.exit_code == 0 and r.output.splitlines()[0].endswith(rows["3"]), r.output
    page = tmp_path / "r.html"
    r = run("report", "2", "--store", store, "-o", page)
    assert r.exit_code == 0 and rows["2"] in page.read_text(), r.output
    r = run("diff", "3", "4", "--store", store, "--table")
    assert r.exit_code == 0, r.output
    assert "x_ptr aligned" in r.output or rows["3"] in r.output


def test_a_number_beyond_the_rows_is_still_a_value_meant_for_p(interpreted_capture):
    store, _, _ = interpreted_capture
    one_error_line(run("vec-report", "64", "--store", store), "'64' is a value, not a kernel",
                   "a row of kinspect ls names a variant only where the store")
