"""Every regex constant in a parser module carries an example line right above it, and matches it."""

import pytest

from kinspect.ir import aarch64, amdgcn, cpu_asm, llvm, mlir, ptx, riscv, sass, x86
from kinspect.diff import normalize
from kinspect.isa import x86 as isa_x86
from tests.helpers import regex_examples

# module -> the fewest regex constants it is known to have (a module that lost its examples fails)
MODULES = {sass: 1, ptx: 1, amdgcn: 1, llvm: 14, mlir: 10, cpu_asm: 1, riscv: 1, x86: 1, aarch64: 1, isa_x86: 1,
           normalize: 29}


@pytest.mark.parametrize("module", list(MODULES), ids=lambda m: m.__name__)
def test_every_regex_has_a_matching_example(module):
    examples = regex_examples(module)
    assert len(examples) >= MODULES[module], "regex constants missing"
    for name, lines in examples.items():
        assert lines, f"{name} has no example line above it"
        for line in lines:
            assert getattr(module, name).search(line), f"{name} does not match its example {line!r}"
