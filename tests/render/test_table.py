"""render.table: the one column layout the terminal views share."""

from kinspect.render.table import aligned


def test_columns_as_wide_as_their_widest_cell_aligned_per_column():
    lines = aligned([("#", "kernel", "calls"), ("1", "softmax", "1,024"), ("12", "mm", "7")], "><>")
    assert lines == ["   #  kernel   calls",
                     "   1  softmax  1,024",
                     "  12  mm           7"]


def test_one_alignment_for_all_and_a_free_last_column():
    lines = aligned([("a", "bbb", "/a/long/folder"), ("cc", "d", "x")], free_last=True)
    assert lines == ["  a   bbb  /a/long/folder", "  cc  d    x"]
    assert aligned([("1", "22"), ("333", "4")], ">") == ["    1  22", "  333   4"]
    assert aligned([]) == []
