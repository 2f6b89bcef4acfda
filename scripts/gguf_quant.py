#!/usr/bin/env python3
"""GGUF tensor block formats in numpy: encoders (fp32 -> raw blocks) and decoders.

The same formats and the same arithmetic as src/quant (block_types.h for the layouts,
quantize.h for the choice of scales, dequantize.h for the values): every function here
gives the C++ reference's bytes and floats bit for bit (tests/integration/test_gguf_quant.py
checks it through build/src/quant/quant_tool). Used to write test GGUF files and by the
numpy reference forward passes. All arithmetic is float32, rounding is to nearest even
(np.rint, astype(float16)), as in C++ (built with -ffp-contract=off).

    blocks = quantize("Q4_K", x)          # x: float32 [..., k] -> uint8 [..., row_bytes]
    y = dequantize("Q4_K", blocks, k)     # -> float32 [..., k]
"""
import numpy as np

# name -> (GGUF type id, elements per block, bytes per block)
TYPES = {
    "F32": (0, 1, 4),
    "F16": (1, 1, 2),
    "Q4_0": (2, 32, 18),
    "Q4_1": (3, 32, 20),
    "Q5_0": (6, 32, 22),
    "Q5_1": (7, 32, 24),
    "Q8_0": (8, 32, 34),
    "Q4_K": (12, 256, 144),
    "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210),
    "BF16": (30, 1, 2),
}

F32 = np.float32


def type_id(name):
    return TYPES[name][0]


def row_bytes(name, k):
    _, elements, nbytes = TYPES[name]
    if k <= 0 or k % elements:
        raise ValueError(f"{name} row length {k} is not a multiple of its block size {elements}")
    return k // elements * nbytes


# ---------------------------------------------------------------------------- helpers

def _half(v):
    """float32 array -> (uint8 [..., 2] little-endian half bytes, the value as float32)."""
    h = np.asarray(v, dtype=F32).astype(np.float16)
    return h.view(np.uint8).reshape(h.shape + (2,)), h.astype(F32)


def _read_half(b):
    return np.ascontiguousarray(b).view(np.float16)[..., 0].astype(F32)


def _round_clamp(v, lo, hi):
    return np.clip(np.rint(v), lo, hi).astype(np.int32)


def _divide(num, den, zero_code, lo, hi):
    """rint(num / den) clamped to [lo, hi]; zero_code where den == 0 (a zero step)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint(num / np.where(den == 0, F32(1), den).astype(F32))
    return np.where(den == 0, zero_code, np.clip(q, lo, hi)).astype(np.int32)


def _largest_magnitude(x):
    """The element of largest magnitude along the last axis (the first of equals; +0 if all zero)."""
    idx = np.argmax(np.abs(x), axis=-1)
    v = np.take_along_axis(x, idx[..., None], axis=-1)[..., 0]
    return np.where(np.abs(v) == 0, F32(0), v).astype(F32)


def _pack_nibbles(u):  # [..., 32] -> [..., 16]
    return ((u[..., :16] & 15) | ((u[..., 16:] & 15) << 4)).astype(np.uint8)


def _nibbles(qs):  # [..., 16] -> [..., 32]
    qs = qs.astype(np.int32)
    return np.concatenate([qs & 15, qs >> 4], axis=-1)


def _pack_high_bits(u):  # bit j of a little-endian u32 = bit 4 of u[j]
    bits = ((u >> 4) & 1).astype(np.uint32) << np.arange(32, dtype=np.uint32)
    word = bits.sum(axis=-1, dtype=np.uint32)
    return word.astype("<u4")[..., None].view(np.uint8)


def _high_bits(qh):
    word = np.ascontiguousarray(qh).view("<u4")[..., 0].astype(np.uint32)
    return ((word[..., None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int32)


# ---------------------------------------------------------------------------- encoders

def _enc_q8_0(x):
    amax = np.abs(x).max(axis=-1)
    dh, d = _half(amax / F32(127))
    q = _divide(x, d[..., None], 0, -127, 127)
    return np.concatenate([dh, q.astype(np.int8).view(np.uint8)], axis=-1)


def _enc_symmetric(x, levels):
    zero = levels // 2
    dh, d = _half(_largest_magnitude(x) / F32(-zero))
    u = _divide(x, d[..., None], 0, -zero, zero - 1) + zero
    return dh, u


def _enc_affine(x, levels):
    lo, hi = x.min(axis=-1), x.max(axis=-1)
    dh, d = _half((hi - lo) / F32(levels - 1))
    mh, m = _half(lo)
    u = _divide(x - m[..., None], d[..., None], 0, 0, levels - 1)
    return dh, mh, u


def _enc_k45(x, five):
    levels = 32 if five else 16
    sub = x.reshape(x.shape[:-1] + (8, 32))
    lo = np.minimum(sub.min(axis=-1), F32(0))
    hi = sub.max(axis=-1)
    scale = (hi - lo) / F32(levels - 1)
    minv = -lo
    max_scale = np.maximum(scale.max(axis=-1), F32(0)) + F32(0)
    max_min = np.maximum(minv.max(axis=-1), F32(0)) + F32(0)
    dh, d = _half(max_scale / F32(63))
    mh, dmin = _half(max_min / F32(63))
    sc = _divide(scale, d[..., None], 0, 0, 63)
    mn = _divide(minv, dmin[..., None], 0, 0, 63)
    step = d[..., None] * sc.astype(F32)
    off = dmin[..., None] * mn.astype(F32)
    u = _divide(sub + off[..., None], step[..., None], 0, 0, levels - 1).reshape(x.shape)
    b = np.zeros(x.shape[:-1] + (12,), dtype=np.int32)
    b[..., 0:4] = (sc[..., :4] & 63) | ((sc[..., 4:] >> 4) << 6)
    b[..., 4:8] = (mn[..., :4] & 63) | ((mn[..., 4:] >> 4) << 6)
    b[..., 8:12] = (sc[..., 4:] & 15) | ((mn[..., 4:] & 15) << 4)
    chunks = u.reshape(x.shape[:-1] + (4, 64))
    qs = ((chunks[..., :32] & 15) | ((chunks[..., 32:] & 15) << 4)).reshape(x.shape[:-1] + (128,))
    parts = [dh, mh, b.astype(np.uint8)]
    if five:
        bit = (chunks >> 4) & 1  # [..., 4, 64]
        qh = np.zeros(x.shape[:-1] + (32,), dtype=np.int32)
        for c in range(4):
            qh |= bit[..., c, :32] << (2 * c)
            qh |= bit[..., c, 32:] << (2 * c + 1)
        parts.append(qh.astype(np.uint8))
    parts.append(qs.astype(np.uint8))
    return np.concatenate(parts, axis=-1)


def _enc_q6_k(x):
    sub = x.reshape(x.shape[:-1] + (16, 16))
    scale = _largest_magnitude(sub) / F32(-32)
    amax = np.maximum(np.abs(scale).max(axis=-1), F32(0))
    dh, d = _half(amax / F32(127))
    sc = _divide(scale, d[..., None], 0, -127, 127)
    step = d[..., None] * sc.astype(F32)
    u = (_divide(sub, step[..., None], 0, -32, 31) + 32).reshape(x.shape)
    halves = u.reshape(x.shape[:-1] + (2, 4, 32))  # [half][part][i]
    ql = np.concatenate([(halves[..., 0, :] & 15) | ((halves[..., 2, :] & 15) << 4),
                         (halves[..., 1, :] & 15) | ((halves[..., 3, :] & 15) << 4)], axis=-1)
    qh = ((halves[..., 0, :] >> 4) | ((halves[..., 1, :] >> 4) << 2) | ((halves[..., 2, :] >> 4) << 4)
          | ((halves[..., 3, :] >> 4) << 6))
    lead = x.shape[:-1]
    return np.concatenate([ql.reshape(lead + (128,)).astype(np.uint8), qh.reshape(lead + (64,)).astype(np.uint8),
                           sc.astype(np.int8).view(np.uint8), dh], axis=-1)


def quantize(name, x):
    """float32 [..., k] -> uint8 [..., row_bytes(name, k)] of GGUF blocks."""
    x = np.ascontiguousarray(x, dtype=F32)
    k = x.shape[-1]
    nbytes = row_bytes(name, k)
    lead = x.shape[:-1]
    if name == "F32":
        return x.view(np.uint8).reshape(lead + (nbytes,))
    if name == "F16":
        return x.astype(np.float16).view(np.uint8).reshape(lead + (nbytes,))
    if name == "BF16":
        bits = x.view(np.uint32).astype(np.uint64)
        nan = (bits & 0x7FFFFFFF) > 0x7F800000
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
        h = np.where(nan, (bits >> 16) | 0x40, rounded).astype("<u2")
        return h.view(np.uint8).reshape(lead + (nbytes,))
    _, elements, _ = TYPES[name]
    blocks = x.reshape(lead + (k // elements, elements))
    if name == "Q8_0":
        out = _enc_q8_0(blocks)
    elif name in ("Q4_0", "Q5_0"):
        dh, u = _enc_symmetric(blocks, 16 if name == "Q4_0" else 32)
        parts = [dh] + ([_pack_high_bits(u)] if name == "Q5_0" else []) + [_pack_nibbles(u)]
        out = np.concatenate(parts, axis=-1)
    elif name in ("Q4_1", "Q5_1"):
        dh, mh, u = _enc_affine(blocks, 16 if name == "Q4_1" else 32)
        parts = [dh, mh] + ([_pack_high_bits(u)] if name == "Q5_1" else []) + [_pack_nibbles(u)]
        out = np.concatenate(parts, axis=-1)
    elif name in ("Q4_K", "Q5_K"):
        out = _enc_k45(blocks, name == "Q5_K")
    elif name == "Q6_K":
        out = _enc_q6_k(blocks)
    else:
        raise ValueError(f"unknown type {name}")
    return np.ascontiguousarray(out.astype(np.uint8)).reshape(lead + (nbytes,))


# ---------------------------------------------------------------------------- decoders

def _k_scales(b):
    b = b.astype(np.int32)
    sc = np.concatenate([b[..., 0:4] & 63, (b[..., 8:12] & 15) | ((b[..., 0:4] >> 6) << 4)], axis=-1)
    mn = np.concatenate([b[..., 4:8] & 63, (b[..., 8:12] >> 4) | ((b[..., 4:8] >> 6) << 4)], axis=-1)
    return sc, mn


def dequantize(name, blocks, k):
    """uint8 [..., row_bytes(name, k)] -> float32 [..., k]."""
    blocks = np.ascontiguousarray(blocks, dtype=np.uint8)
    nbytes = row_bytes(name, k)
    if blocks.shape[-1] != nbytes:
        raise ValueError(f"{name} rows of {k} need {nbytes} bytes, got {blocks.shape[-1]}")
    lead = blocks.shape[:-1]
    if name == "F32":
        return blocks.view(np.float32).reshape(lead + (k,)).copy()
    if name == "F16":
        return blocks.view(np.float16).astype(F32).reshape(lead + (k,))
    if name == "BF16":
        return (blocks.view("<u2").astype(np.uint32) << 16).view(np.float32).reshape(lead + (k,))
    _, elements, size = TYPES[name]
    p = blocks.reshape(lead + (k // elements, size))
    if name == "Q8_0":
        d = _read_half(p[..., 0:2])
        y = d[..., None] * p[..., 2:].view(np.int8).astype(F32)
    elif name == "Q4_0":
        y = _read_half(p[..., 0:2])[..., None] * (_nibbles(p[..., 2:18]) - 8).astype(F32)
    elif name == "Q4_1":
        y = _read_half(p[..., 0:2])[..., None] * _nibbles(p[..., 4:20]).astype(F32) + _read_half(p[..., 2:4])[..., None]
    elif name == "Q5_0":
        u = _nibbles(p[..., 6:22]) | (_high_bits(p[..., 2:6]) << 4)
        y = _read_half(p[..., 0:2])[..., None] * (u - 16).astype(F32)
    elif name == "Q5_1":
        u = _nibbles(p[..., 8:24]) | (_high_bits(p[..., 4:8]) << 4)
        y = _read_half(p[..., 0:2])[..., None] * u.astype(F32) + _read_half(p[..., 2:4])[..., None]
    elif name in ("Q4_K", "Q5_K"):
        five = name == "Q5_K"
        d, dmin = _read_half(p[..., 0:2]), _read_half(p[..., 2:4])
        sc, mn = _k_scales(p[..., 4:16])
        qs = p[..., 48:176] if five else p[..., 16:144]
        q = qs.astype(np.int32).reshape(qs.shape[:-1] + (4, 32))
        u = np.stack([q & 15, q >> 4], axis=-2)  # [..., chunk, upper, i]
        if five:
            qh = p[..., 16:48].astype(np.int32)
            shifts = (2 * np.arange(4)[:, None] + np.arange(2)[None, :])[..., None]  # [chunk, upper, 1]
            u = u | (((qh[..., None, None, :] >> shifts) & 1) << 4)
        u = u.reshape(u.shape[:-3] + (8, 32))
        step = d[..., None] * sc.astype(F32)
        off = dmin[..., None] * mn.astype(F32)
        y = step[..., None] * u.astype(F32) - off[..., None]
    elif name == "Q6_K":
        ql = p[..., 0:128].astype(np.int32).reshape(p.shape[:-1] + (2, 2, 32))  # [half][ql half][i]
        qh = p[..., 128:192].astype(np.int32).reshape(p.shape[:-1] + (2, 32))
        sc = p[..., 192:208].view(np.int8).astype(F32)
        d = _read_half(p[..., 208:210])
        low = np.stack([ql[..., 0, :] & 15, ql[..., 1, :] & 15, ql[..., 0, :] >> 4, ql[..., 1, :] >> 4], axis=-2)
        high = np.stack([(qh >> (2 * part)) & 3 for part in range(4)], axis=-2)
        u = (low | (high << 4)).reshape(p.shape[:-1] + (16, 16))
        y = (d[..., None] * sc)[..., None] * (u - 32).astype(F32)
    else:
        raise ValueError(f"unknown type {name}")
    return np.ascontiguousarray(y, dtype=F32).reshape(lead + (k,))
