"""agents/decode_linears.py: a decode step's linear layers computed weight-first on the CPU."""
import torch
import torch.nn.functional as F
from torch import nn

from solvergym.agents.decode_linears import MAX_ROWS, decode_linears
from solvergym.agents.tied_grads import use_direct_tied_grads


def _model(bias: bool) -> nn.Sequential:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(576, 1536, bias=bias), nn.SiLU(), nn.Linear(1536, 576, bias=bias))


def test_few_rows_take_the_weight_first_product():
    for bias in (False, True):
        model = _model(bias)
        lin = model[0]
        x = torch.randn(4, 2, 576)  # 8 rows, as a decode step of 8 sequences
        with torch.no_grad():
            plain = F.linear(x, lin.weight, lin.bias)
            with decode_linears(model):
                got = lin(x)
            rows = x.reshape(8, 576)
            first = (torch.addmm(lin.bias[:, None], lin.weight, rows.t()) if bias else lin.weight.mm(rows.t())).t()
        assert got.shape == plain.shape and got.is_contiguous()
        assert torch.equal(got, first.reshape(4, 2, 1536))  # the weight-first product, exactly
        # ... which is not F.linear's bit for bit here (so the line above tells the paths apart),
        # but the same to rounding
        assert not torch.equal(got, plain)
        torch.testing.assert_close(got, plain, rtol=1e-5, atol=1e-5)


def test_other_calls_run_the_modules_own_forward():
    model = _model(True)
    lin = model[0]
    many = torch.randn(MAX_ROWS + 1, 576)
    few = torch.randn(3, 576, requires_grad=True)
    with torch.no_grad():
        expect_many = F.linear(many, lin.weight, lin.bias)
    expect_grad = F.linear(few, lin.weight, lin.bias)
    with decode_linears(model):
        with torch.no_grad():
            assert torch.equal(lin(many), expect_many)  # a prefill's many rows
        got = lin(few)  # autograd on: the training forwards
        assert torch.equal(got, expect_grad) and got.requires_grad
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            assert lin(few.detach()).dtype == torch.bfloat16  # autocast's own rules
        with torch.no_grad():
            half = few.detach().double()
            assert lin.double()(half).dtype == torch.float64
        lin.float()


def test_a_subclass_of_linear_keeps_its_own_forward():
    class Doubled(nn.Linear):  # stands for a quantised layer: its weight is not what it multiplies by
        def forward(self, x):
            return 2 * super().forward(x)

    model = nn.Sequential(Doubled(8, 4))
    x = torch.randn(2, 8)
    with torch.no_grad(), decode_linears(model):
        assert "forward" not in model[0].__dict__
        torch.testing.assert_close(model(x), 2 * F.linear(x, model[0].weight, model[0].bias))


def test_forwards_are_restored_including_an_instance_forward():
    emb = nn.Embedding(100, 16)
    head = nn.Linear(16, 100, bias=False)
    head.weight = emb.weight

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.head, self.mid = emb, head, nn.Linear(16, 16)

        def get_output_embeddings(self):
            return self.head

        def get_input_embeddings(self):
            return self.emb

    model = Tiny()
    assert use_direct_tied_grads(model)
    own = head.__dict__["forward"]
    with decode_linears(model):
        assert head.__dict__["forward"] is not own and "forward" in model.mid.__dict__
        with torch.no_grad():
            out = head(torch.randn(2, 16))
        assert out.shape == (2, 100)
    assert head.__dict__["forward"] is own  # the direct tied head's forward is back
    assert "forward" not in model.mid.__dict__  # the class's forward again
    try:
        with decode_linears(model):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert head.__dict__["forward"] is own and "forward" not in model.mid.__dict__


def test_the_embedded_model_decodes_with_it_and_is_left_as_it_was():
    from solvergym.agents.hf import HFAgent, SamplingConfig

    agent = HFAgent("default")
    sp = SamplingConfig(max_new_tokens=6, temperature=0.8, ignore_eos=True, seed=3)
    prompt = agent.tokenizer("Is (x1 or x2) satisfiable?")["input_ids"]
    a = agent.generate([prompt], n=2, sampling=sp)
    b = agent.generate([prompt], n=2, sampling=sp)
    assert [c.token_ids for c in a] == [c.token_ids for c in b]  # deterministic
    assert not any("forward" in m.__dict__ for m in agent.model.modules() if isinstance(m, nn.Linear))
    # the log-probabilities of the drawn tokens are the model's own, to rounding
    ids = torch.tensor([prompt + a[0].token_ids])
    with torch.no_grad():
        logits = agent.model(input_ids=ids).logits[0, len(prompt) - 1:-1] / 0.8
    want = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(a[0].token_ids)[:, None]).squeeze(1)
    torch.testing.assert_close(torch.tensor(a[0].logprobs), want, rtol=0, atol=1e-4)
