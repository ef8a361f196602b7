"""Counter-based random draws for the minibatch (torch) kernel: every draw is a hash of where it is used.

The numba kernels advance one LCG stream per chunk, so a draw depends on everything drawn before it in
the chunk. A minibatch kernel that runs on a GPU, or on N processes that each hold a part of a step,
cannot keep such a stream: the draws must not depend on which process (or which thread of the GPU)
handles a token. So each draw is a pure function of the seed, the epoch, the token's position in the
corpus and what the draw is for:

    k0, k1      = the two 32-bit halves of splitmix64(splitmix64(seed) ^ epoch)
    key(t)      = h(h((t mod 2**32) ^ k0) ^ (t >> 32) ^ k1)           for corpus position t
    draw(t, p)  = h(key(t) ^ salt(p)),  salt(p) = ((p + 1) * 0x9E3779B9) mod 2**32

with ``h`` the 32-bit integer hash "lowbias32" (two multiply-xorshift rounds; Wellons' hash prospector).
Purposes ``p``: 0 keep (subsampling), 1 the window's reach, ``2 .. 2 + max_context - 1`` the sampled
contexts of a large basket, then ``2 + max_context + q * negative + k`` for negative ``k`` of the
``q``-th group of the token's contexts. A uniform integer below ``n`` is ``(draw * n) >> 32`` and a
uniform real is ``draw / 2**32``, as in the numba kernels.

Consequences: 1 or N processes, CPU or GPU, draw exactly the same numbers, so they train the same pairs
against the same negatives; and a resumed run needs no generator state beyond (seed, epoch, position).

This module is the NumPy version (used by the reference and the tests); :mod:`.minibatch` computes the
same integers with torch tensors.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "GOLDEN",
    "HASH_A",
    "HASH_B",
    "M32",
    "MASK64",
    "PURPOSE_KEEP",
    "PURPOSE_REACH",
    "PURPOSE_SAMPLED",
    "SR_SALT",
    "draw",
    "epoch_keys",
    "hash32",
    "negative_purpose",
    "round_keys",
    "splitmix64",
    "token_keys",
]

M32 = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
HASH_A = 0x7FEB352D
HASH_B = 0x846CA68B
GOLDEN = 0x9E3779B9
PURPOSE_KEEP = 0
PURPOSE_REACH = 1
PURPOSE_SAMPLED = 2
#: Mixed into the seed for the stochastic rounding of bfloat16 tables.
SR_SALT = 0x5EED_B16B_0000_0001


def splitmix64(x: int) -> int:
    """One step of splitmix64: a bijective 64-bit mixer, used to derive seeds and keys."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def epoch_keys(seed: int, epoch: int) -> tuple[int, int]:
    """The two 32-bit keys of ``epoch``'s draws: halves of ``splitmix64(splitmix64(seed) ^ epoch)``."""
    k = splitmix64(splitmix64(int(seed) & MASK64) ^ int(epoch))
    return k & M32, k >> 32


def round_keys(seed: int, step: int) -> tuple[int, int]:
    """Keys of the stochastic rounding of global step ``step`` (bfloat16 tables)."""
    k = splitmix64(splitmix64((int(seed) ^ SR_SALT) & MASK64) ^ int(step))
    return k & M32, k >> 32


def hash32(x: np.ndarray) -> np.ndarray:
    """lowbias32 on uint64 arrays holding 32-bit values."""
    x = np.asarray(x, dtype=np.uint64) & np.uint64(M32)
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(HASH_A)) & np.uint64(M32)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(HASH_B)) & np.uint64(M32)
    x ^= x >> np.uint64(16)
    return x


def token_keys(pos: np.ndarray, k0: int, k1: int) -> np.ndarray:
    """``key(t)`` for corpus positions ``pos`` (any non-negative ints below 2**63)."""
    pos = np.asarray(pos, dtype=np.uint64)
    lo = pos & np.uint64(M32)
    hi = pos >> np.uint64(32)
    return hash32(hash32(lo ^ np.uint64(k0)) ^ hi ^ np.uint64(k1))


def draw(keys: np.ndarray, purpose: np.ndarray | int) -> np.ndarray:
    """``draw(t, p)``: uniform 32-bit integers (as uint64) from token keys and purposes."""
    salt = ((np.asarray(purpose, dtype=np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)) & np.uint64(M32)
    return hash32(np.asarray(keys, dtype=np.uint64) ^ salt)


def negative_purpose(max_context: int, negative: int, group_rank: int, k: int) -> int:
    """Purpose of negative ``k`` of a token's ``group_rank``-th group of contexts."""
    return PURPOSE_SAMPLED + max_context + group_rank * negative + k
