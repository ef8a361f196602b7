"""The mechanics of an embedding layer, shown as tests (docs/mechanics.md walks through the same facts).

1. A lookup is a matrix product: ``table(ids) == one_hot(ids) @ W``.
2. After one backward pass only the rows that were looked up have a non-zero gradient (dense and sparse).
3. The gradient of the table is ``one_hot(ids).T @ upstream``: repeated ids add up.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from likewise.torch import EmbeddingTable  # noqa: E402

torch.set_num_threads(1)  # the CI machine's cores are shared; these tensors are tiny
V, D = 7, 4


def _table(sparse: bool = False) -> EmbeddingTable:
    torch.manual_seed(0)
    return EmbeddingTable(V, D, sparse=sparse).double()


IDS = torch.tensor([[1, 3], [3, 5]])  # id 3 twice; rows 0, 2, 4, 6 never used
USED = {1, 3, 5}


def test_lookup_is_one_hot_times_table():
    t = _table()
    onehot = F.one_hot(IDS, V).double()  # [2, 2, V]
    assert torch.equal(t(IDS), onehot @ t.weight)  # exact: each output row is one row times 1.0


@pytest.mark.parametrize("sparse", [False, True])
def test_only_used_rows_get_gradient(sparse):
    t = _table(sparse)
    upstream = torch.randn(2, 2, D, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    (t(IDS) * upstream).sum().backward()
    grad = t.weight.grad
    assert grad.is_sparse == sparse
    dense = grad.to_dense()
    nonzero_rows = {i for i in range(V) if dense[i].abs().sum() > 0}
    assert nonzero_rows == USED
    if sparse:
        # a sparse gradient stores one entry per looked-up id (duplicates are summed when coalesced)
        assert sorted(grad.coalesce().indices()[0].tolist()) == sorted(USED)


@pytest.mark.parametrize("sparse", [False, True])
def test_grad_of_table_is_one_hot_transposed_times_upstream(sparse):
    t = _table(sparse)
    upstream = torch.randn(2, 2, D, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    t(IDS).backward(upstream)
    onehot = F.one_hot(IDS.reshape(-1), V).double()  # [4, V]
    expected = onehot.T @ upstream.reshape(-1, D)  # [V, D]
    torch.testing.assert_close(t.weight.grad.to_dense(), expected, rtol=0, atol=1e-12)
    # the repeated id 3 received the sum of its two upstream rows
    torch.testing.assert_close(t.weight.grad.to_dense()[3], upstream[0, 1] + upstream[1, 0])


def test_one_sgd_step_moves_only_used_rows():
    t = _table(sparse=True)
    before = t.weight.detach().clone()
    opt = torch.optim.SGD(t.parameters(), lr=0.1)
    t(IDS).pow(2).sum().backward()
    opt.step()
    moved = {i for i in range(V) if not torch.equal(before[i], t.weight[i].detach())}
    assert moved == USED
