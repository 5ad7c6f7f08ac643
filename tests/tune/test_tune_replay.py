"""How a tune prepares a captured launch's arguments and checks a candidate against the original config,
on the CPU: kinspect.tune.run.Replayer with its one GPU step (the launch) replaced by a kernel written in
torch the way Inductor's code indexes memory (flat offsets with the captured strides written in).

The H200 run of the GPT-2 step refused every candidate of its nll_loss/log_softmax backward kernel
("max error 1.6e+18"): each run started from Tensor.clone() of the inputs, which makes the logits (rows of
50257 at a stride of 50264) contiguous, so the kernel, indexing with 50264 per row, read every copy shifted
and past its end, into whatever memory followed it.
"""

import pytest
import torch

from kinspect.core.model import ArgSpec
from kinspect.replay.args import copy_as_laid_out, new_tensor
from kinspect.replay.spec import ReplaySpec
from kinspect.tune.run import Replayer
from kinspect.tune.space import Candidate

ROWS, COLS, PITCH = 6, 7, 9        # the logits: 6 rows of 7 at a stride of 9 (Inductor pads rows to 16 bytes)
ALIGNED = {"tt.divisibility": 16}


def _spec(*, in_out: bool = False) -> ReplaySpec:
    t = lambda name, shape, strides, dtype: ArgSpec(name, "tensor", shape=shape, strides=strides,   # noqa: E731
                                                    dtype=dtype, device="cuda:0")
    args = (t("in_ptr0", (ROWS,), (1,), "int64"),                   # nll_loss targets
            t("in_ptr3", (2, ROWS // 2, COLS), (PITCH * ROWS // 2, PITCH, 1), "bfloat16"),
            t("in_ptr4", (ROWS, 1), (1, 1), "float32"),
            t("out_ptr1", (2, ROWS // 2, COLS), (COLS * ROWS // 2, COLS, 1), "bfloat16"))
    if in_out:
        args += (t("in_out_ptr0", (ROWS,), (1,), "float32"),)
    args += (ArgSpec("xnumel", "int", ROWS), ArgSpec("r0_numel", "int", COLS), ArgSpec("XBLOCK", "int", 1),
             ArgSpec("R0_BLOCK", "int", 8))
    signature = {a.name: "constexpr" if a.name.endswith("BLOCK") else "i32" if a.kind == "int" else "*fp32"
                 for a in args}
    # in_ptr3 was not specialized as aligned: its copy must start one element in, as the capture's did
    attributes = {a.name: ALIGNED for a in args if a.kind == "tensor" and a.name != "in_ptr3"}
    return ReplaySpec(kernel="triton_red_fused_nll_loss_backward_0", target="cuda:90", args=args, grid=(ROWS, 1, 1),
                      signature=signature, attributes=attributes)


def _flat(t):
    """The tensor's whole storage as one flat tensor: what a pointer plus an offset reads."""
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())


class TorchKernel(Replayer):
    """The kernel in torch, indexing as Inductor's code does (`in_ptr3 + (r0_1 + 9*x0)`, `out_ptr1 + (r0_1 +
    7*x0)`): the strides are the captured ones, not the tensors'. XBLOCK rows per program, grid[0] programs.
    `mutate` writes an input too; `noisy` makes the original's output differ run to run."""

    mutate = False
    noisy = False
    runs = 0

    def _launch(self, c, grid, args):
        type(self).runs += 1
        xblock = dict(c.constexprs).get("XBLOCK", 1)
        logits, out = _flat(args["in_ptr3"]), _flat(args["out_ptr1"])
        base3, base_out = args["in_ptr3"].storage_offset(), args["out_ptr1"].storage_offset()
        target = args["in_ptr0"]
        for x in range(min(ROWS, grid[0] * xblock)):
            row = logits[base3 + PITCH * x: base3 + PITCH * x + COLS].float()     # reads past the end of a
            assert row.numel() == COLS, "read past the end of in_ptr3"           # clone() of the logits
            g = torch.exp(row - args["in_ptr4"][x, 0]) - (torch.arange(COLS) == target[x]).float()
            if self.noisy and c.why == "what the program ran":
                g = g + torch.randn(()) * 10
            out[base_out + COLS * x: base_out + COLS * x + COLS] = g.to(out.dtype)
        if "in_out_ptr0" in args:
            args["in_out_ptr0"].add_(1.0)
        if self.mutate and c.num_warps == 2:
            args["in_ptr4"].zero_()


ORIGINAL = Candidate((("R0_BLOCK", 8), ("XBLOCK", 1)), 8, 1, why="what the program ran", origin="original")


def _cand(xblock=1, warps=4, r0=16):
    return Candidate((("R0_BLOCK", r0), ("XBLOCK", xblock)), warps, 1, why="test", origin="kinspect")


def test_copies_keep_the_captured_layout():
    t = new_tensor([2, 3, COLS], [PITCH * 3, PITCH, 1], "bfloat16", "cpu", aligned=False)
    c = copy_as_laid_out(t)
    assert c.stride() == t.stride() and c.storage_offset() == 1 == t.storage_offset()
    assert c.untyped_storage().nbytes() == t.untyped_storage().nbytes()
    assert torch.equal(_flat(c), _flat(t)), "the gaps between rows are copied too"
    assert c.untyped_storage().data_ptr() != t.untyped_storage().data_ptr()
    # what the tune did before: clone() gives rows at 7, not 9, and no offset
    assert t.clone().stride() == (3 * COLS, COLS, 1) and t.clone().storage_offset() == 0


def test_a_candidate_on_padded_rows_is_checked_against_the_original():
    r = TorchKernel(_spec(), device="cpu")
    assert r.inputs["in_ptr3"].stride() == (PITCH * ROWS // 2, PITCH, 1)
    ok, line = r.check(_cand(), (ROWS, 1, 1), ORIGINAL, (ROWS, 1, 1))
    assert ok and line.startswith("out_ptr1: correct"), line
    ok, line = r.check(_cand(xblock=2), (ROWS // 2, 1, 1), ORIGINAL, (ROWS, 1, 1))
    assert ok, line
    # a candidate launched on too small a grid leaves rows as they were: wrong
    ok, line = r.check(_cand(xblock=2), (ROWS // 2 - 1, 1, 1), ORIGINAL, (ROWS, 1, 1))
    assert not ok and line.startswith("out_ptr1: WRONG"), line


def test_the_reference_is_made_once_and_every_run_starts_from_the_same_inputs():
    TorchKernel.runs = 0
    r = TorchKernel(_spec(in_out=True), device="cpu")
    before = r.inputs["in_out_ptr0"].clone()
    for w in (1, 4, 16):
        ok, line = r.check(_cand(warps=w), (ROWS, 1, 1), ORIGINAL, (ROWS, 1, 1))
        assert ok, line          # in_out_ptr0 + 1 each time: every run starts from the captured values
    assert TorchKernel.runs == 2 + 3, "the original runs twice (reproducibility), once per tune; each candidate once"
    assert torch.equal(r.inputs["in_out_ptr0"], before)
    assert set(r.reference(ORIGINAL, (ROWS, 1, 1)).outputs) == {"out_ptr1", "in_out_ptr0"}


def test_a_candidate_that_writes_an_input_is_wrong():
    class Mutating(TorchKernel):
        mutate = True

    r = Mutating(_spec(), device="cpu")
    ok, line = r.check(_cand(warps=2), (ROWS, 1, 1), ORIGINAL, (ROWS, 1, 1))
    assert not ok and line == "in_ptr4: WRONG: written, where the original config leaves it as it was"


def test_an_original_that_is_not_reproducible_checks_nothing():
    class Noisy(TorchKernel):
        noisy = True

    torch.manual_seed(0)
    r = Noisy(_spec(), device="cpu")
    ok, line = r.check(_cand(), (ROWS, 1, 1), ORIGINAL, (ROWS, 1, 1))
    assert not ok and line.startswith("not checkable: the original config gives another output"), line


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_compare_keeps_integers_and_doubles_exact(dtype):
    from kinspect.bench.check import compare

    a = torch.tensor([2 ** 40 + 3, 3], dtype=getattr(torch, dtype))
    b = a.clone()
    b[0] += 1
    assert compare(b, a, precision=dtype).max_abs == 1.0     # float32 would round 2**40 + 3 and 2**40 + 4 alike


def test_a_row_whose_candidates_were_all_refused_says_so():
    """The H200 row of that kernel would have read 'the program's config was the fastest' with every
    candidate refused as wrong: the row counts what became of them instead."""
    from kinspect.render.tune import table_row
    from kinspect.tune.outcome import outcome
    from kinspect.tune.result import Trial, TuneResult

    timed = dict(status="timed", median_ms=0.5, p20_ms=0.49, p80_ms=0.51, runs=200)
    wrong = "out_ptr1: WRONG: max error 1.6e+18 of the original config's output's scale"
    trials = (Trial(ORIGINAL, **timed), Trial(_cand(r0=2048), "wrong", why=wrong),
              Trial(_cand(warps=4), "wrong", why=wrong))
    row = table_row(*(lambda r: (r, outcome(r)))(TuneResult("k", "v", "cuda:90", ("narrow_loads",), trials)))
    assert row["winner"] == ORIGINAL.label() and "fastest" not in row["reason"]
    assert row["reason"].startswith("kept what the program ran: none of kinspect's 2 candidate(s) ran correctly "
                                    "(2 wrong; first: out_ptr1: WRONG"), row["reason"]
    close = Trial(_cand(warps=4), status="timed", median_ms=0.495, p20_ms=0.49, p80_ms=0.52, runs=200)
    r = TuneResult("k", "v", "cuda:90", (), (Trial(ORIGINAL, **timed), close))
    assert table_row(r, outcome(r))["reason"] == ("kept what the program ran: none of 1 timed candidate(s) measurably "
                                                  "faster (the fastest: R0_BLOCK=16 XBLOCK=1 w4 s1 at 1.01x, within "
                                                  "the timings' spread)")
