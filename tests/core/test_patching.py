"""core.patching: every replaced name comes back as it was (set, inherited or missing), newest first,
also when a restore or the block fails, and a newer value set by someone else is kept where asked."""

import sys
import types

import pytest

from kinspect.core.patching import Patches, patched


class Base:
    def run(self):
        return "base"


class Child(Base):
    pass


def test_a_class_attribute_inherited_comes_back_inherited_not_copied():
    with Patches() as p:
        p.attr(Child, "run", lambda self: "patched")
        assert Child().run() == "patched"
    assert "run" not in vars(Child) and Child().run() == "base"


def test_a_missing_name_is_removed_and_an_own_one_restored_even_when_the_block_raises():
    module = types.ModuleType("m")
    module.kept = 1
    with pytest.raises(RuntimeError), Patches() as p:
        p.attr(module, "kept", 2)
        p.attr(module, "added", 3)
        raise RuntimeError
    assert module.kept == 1 and not hasattr(module, "added")


def test_restores_run_newest_first_and_all_run_though_one_fails():
    order = []
    p = Patches()
    p.callback(order.append, "first")
    p.callback(lambda: (_ for _ in ()).throw(ValueError("bad")))
    p.callback(order.append, "last")
    with pytest.raises(ValueError):
        p.close()
    assert order == ["last", "first"]


def test_the_same_name_patched_twice_ends_as_it_began():
    with Patches() as p:
        p.attr(Base, "run", lambda self: 1)
        p.attr(Base, "run", lambda self: 2)
        assert Base().run() == 2
    assert Base().run() == "base"


def test_keep_newer_leaves_a_later_tools_wrapper_in_place():
    original = vars(Base)["run"]
    p = Patches()
    ours = p.attr(Base, "run", lambda self: "ours", keep_newer=True)
    assert ours is original

    def theirs(self):
        return "theirs"

    Base.run = theirs          # another tool wraps after kinspect
    p.close()
    assert vars(Base)["run"] is theirs
    Base.run = original


def test_mapping_entries_and_an_instance_attribute():
    key = "kinspect_test_patching_module"
    obj = types.SimpleNamespace(listener=None)
    with Patches() as p:
        p.item(sys.modules, key, types.ModuleType(key))
        assert p.attr(obj, "listener", print) is None
        assert key in sys.modules and obj.listener is print
    assert key not in sys.modules and obj.listener is None
    with patched(obj, "listener", len):
        assert obj.listener is len
    assert obj.listener is None
