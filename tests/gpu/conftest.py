import pytest


def pytest_collection_modifyitems(config, items):
    """Everything under tests/gpu needs a GPU: mark it, and skip cleanly where there is none."""
    import torch

    for item in items:
        if "tests/gpu/" in str(item.fspath):
            item.add_marker(pytest.mark.gpu)
            if not torch.cuda.is_available():
                item.add_marker(pytest.mark.skip(reason="no GPU here"))
