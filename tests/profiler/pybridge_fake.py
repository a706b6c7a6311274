# The program that profiler.unit.pybridge (test_pybridge.cpp) runs inside
# its embedded Python, on the fake `torch` that the test writes into a
# temporary folder at the head of sys.path. This file is the user's code:
# it is not under torch's folder, so frames in it are the program's own.
#
# Storage addresses and sizes are picked by hand; the test lists the OWNER
# reports they must give. A comment "# at: NAME" marks a line whose number
# the test looks up to build the expected "FILE:LINE FUNCTION" text.
import copy

import _gmp_test
import torch
from torch import nn

P = nn.Parameter
T = torch.Tensor


def storage(ptr):
    return torch.Storage(ptr)


class Lin(nn.Module):
    def __init__(self, weight, bias=None):
        super().__init__()
        self.weight = weight
        self.register_parameter("bias", bias)  # None: skipped

    def forward(self, x):
        return x + 1


class Block(nn.Module):
    def __init__(self, lin):
        super().__init__()
        self.lin = lin

    def forward(self, x):
        return self.lin(x)


class CheckpointWrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self._checkpoint_wrapped_module = inner

    def forward(self, x):
        return self._checkpoint_wrapped_module(x)


class DistributedDataParallel(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x):
        return self.module(x)


class Boom(nn.Module):
    def forward(self, x):
        raise ValueError("boom")


class Probe:
    # copy.copy (the standard library's Python code) calls the builtin
    __copy__ = _gmp_test.frame


S_FC1_W, S_FC1_B, S_MEAN, S_TIED = 0x100000, 0x200000, 0x300000, 0x400000
S_ALIAS, S_SHARED, S_BLK0, S_BLK1, S_CPU = 0x500000, 0x600000, 0x700000, 0x800000, 0x900000
S_FRESH, S_LATE = 0xA00000, 0xB00000


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Lin(P(0, storage(S_FC1_W), 4096), P(0, storage(S_FC1_B), 64))
        # a container that is never called: its blocks are found two levels down
        self.blocks = nn.ModuleList([Block(Lin(P(0, storage(S_BLK0), 256))),
                                     Block(CheckpointWrapper(Lin(P(1, storage(S_BLK1), 512))))])
        tied = P(0, storage(S_TIED), 1024)
        self.embed = Lin(tied)
        self.head = Lin(tied)
        self.boom = Boom()
        self.cpu_scale = P(-1, storage(S_CPU), 16)  # not on a CUDA device
        self.alias_a = P(0, storage(S_ALIAS), 32)
        self.alias_b = self.alias_a  # one tensor, two names
        shared = storage(S_SHARED)  # two tensors, one storage
        self.shared_x = P(0, shared, 100)
        self.shared_y = P(0, shared, 28)
        self.register_buffer("running_mean", T(0, storage(S_MEAN), 128))
        self.register_buffer("unused", None)
        self.register_buffer("mask", T(0, shared, 8))  # a buffer on a parameter's storage

    def forward(self, x):
        x = self.fc1(x)
        for b in self.blocks:
            x = b(x)
        x = self.head(self.embed(x))
        try:
            self.boom(x)
        except ValueError:
            pass
        _gmp_test.frame()  # at: direct
        torch.probe(_gmp_test.frame)  # at: through_torch
        copy.copy(Probe())  # at: through_stdlib
        _gmp_test.op()  # at: op
        return x


def make():
    net = Net()
    return DistributedDataParallel(net), net


def where():
    return _gmp_test.stack()  # at: stack_inner


def step(model):
    where()  # at: stack_outer
    return model(0)


def fresh():
    # a root module that dies at the return: the bridge forgets it (weak
    # reference), so the next one, maybe at the same address, is new
    m = Lin(P(0, storage(S_FRESH), 48))
    return m(0)


class Late(nn.Module):
    # the hooks may come in at the op inside its forward: its child is then
    # called inside a module call the hooks never saw
    def __init__(self):
        super().__init__()
        self.inner = Block(Lin(P(0, storage(S_LATE), 96)))

    def forward(self, x):
        _gmp_test.op()  # at: late_op
        return self.inner(x)


def late():
    return Late()
