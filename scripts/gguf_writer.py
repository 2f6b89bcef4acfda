#!/usr/bin/env python3
"""GGUF v3 writer (Python + numpy), written from the GGUF format description.

    from gguf_writer import GGUFWriter, GGMLType, ValueType, typed
    w = GGUFWriter(alignment=32)
    w.add("general.architecture", "llama")                       # str -> string
    w.add("llama.block_count", 2)                                # int -> uint32 (int64 if it does not fit)
    w.add("llama.rope.freq_base", 10000.0)                       # float -> float32
    w.add("llama.context_length", typed(ValueType.UINT64, 2048)) # explicit type
    w.add("tokenizer.ggml.scores", typed(ValueType.ARRAY, [0.0, -1.0], ValueType.FLOAT32))
    w.add_array_tensor("token_embd.weight", numpy_array, GGMLType.F16)   # F32 / F16 / BF16 encoded here
    w.add_tensor("blk.0.attn_q.weight", GGMLType.Q4_0, (rows, cols), raw_bytes)  # pre-encoded blocks
    w.write("model.gguf")

Shapes are row-major (numpy's order, the last dimension contiguous); the file stores
ggml's order (first dimension contiguous), so the dims are written reversed. The last
dimension must be a multiple of the type's block size and `raw_bytes` exactly the bytes
the type table gives for the shape: quantised blocks come from their own encoders
(scripts/gguf_quant.py). Data start and every tensor offset are aligned to
`alignment` (written as general.alignment when it is not the default 32).

Layout written: "GGUF", uint32 version 3, uint64 tensor count, uint64 metadata count;
each metadata pair (uint64-length key, uint32 value type, value; arrays: uint32 element
type, uint64 count, elements); each tensor info (name, uint32 n_dims, uint64 dims,
uint32 ggml type, uint64 offset from the data section); zero padding to the alignment;
the tensors' bytes, each padded to the alignment. Little-endian throughout.
"""
import enum
import struct

import numpy as np


class ValueType(enum.IntEnum):
    UINT8 = 0
    INT8 = 1
    UINT16 = 2
    INT16 = 3
    UINT32 = 4
    INT32 = 5
    FLOAT32 = 6
    BOOL = 7
    STRING = 8
    ARRAY = 9
    UINT64 = 10
    INT64 = 11
    FLOAT64 = 12


class GGMLType(enum.IntEnum):
    F32 = 0
    F16 = 1
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6
    Q5_1 = 7
    Q8_0 = 8
    Q8_1 = 9
    Q2_K = 10
    Q3_K = 11
    Q4_K = 12
    Q5_K = 13
    Q6_K = 14
    Q8_K = 15
    I8 = 24
    I16 = 25
    I32 = 26
    I64 = 27
    F64 = 28
    BF16 = 30


# (values per block, bytes per block), as src/gguf/ggml_type.cc.
BLOCK = {
    GGMLType.F32: (1, 4), GGMLType.F16: (1, 2), GGMLType.BF16: (1, 2), GGMLType.F64: (1, 8),
    GGMLType.I8: (1, 1), GGMLType.I16: (1, 2), GGMLType.I32: (1, 4), GGMLType.I64: (1, 8),
    GGMLType.Q4_0: (32, 18), GGMLType.Q4_1: (32, 20), GGMLType.Q5_0: (32, 22), GGMLType.Q5_1: (32, 24),
    GGMLType.Q8_0: (32, 34), GGMLType.Q8_1: (32, 36), GGMLType.Q2_K: (256, 84), GGMLType.Q3_K: (256, 110),
    GGMLType.Q4_K: (256, 144), GGMLType.Q5_K: (256, 176), GGMLType.Q6_K: (256, 210), GGMLType.Q8_K: (256, 292),
}

_SCALAR_FORMAT = {
    ValueType.UINT8: "<B", ValueType.INT8: "<b", ValueType.UINT16: "<H", ValueType.INT16: "<h",
    ValueType.UINT32: "<I", ValueType.INT32: "<i", ValueType.FLOAT32: "<f", ValueType.BOOL: "<?",
    ValueType.UINT64: "<Q", ValueType.INT64: "<q", ValueType.FLOAT64: "<d",
}
_NUMPY_DTYPE = {
    ValueType.UINT8: "<u1", ValueType.INT8: "<i1", ValueType.UINT16: "<u2", ValueType.INT16: "<i2",
    ValueType.UINT32: "<u4", ValueType.INT32: "<i4", ValueType.FLOAT32: "<f4", ValueType.BOOL: "<u1",
    ValueType.UINT64: "<u8", ValueType.INT64: "<i8", ValueType.FLOAT64: "<f8",
}


class typed:
    """A metadata value with an explicit type; for arrays, `element` is the element
    type (its items may themselves be `typed` arrays: nested arrays)."""

    def __init__(self, type_, value, element=None):
        self.type = ValueType(type_)
        self.value = value
        self.element = None if element is None else ValueType(element)


def infer(value):
    """The GGUF type of a plain Python value (see the module docstring)."""
    if isinstance(value, typed):
        return value
    if isinstance(value, bool):
        return typed(ValueType.BOOL, value)
    if isinstance(value, int):
        return typed(ValueType.UINT32 if 0 <= value < 2**32 else ValueType.INT64, value)
    if isinstance(value, float):
        return typed(ValueType.FLOAT32, value)
    if isinstance(value, str):
        return typed(ValueType.STRING, value)
    if isinstance(value, (list, tuple)):
        items = [infer(v) for v in value]
        element = items[0].type if items else ValueType.UINT32
        if element == ValueType.UINT32 and any(i.type == ValueType.INT64 for i in items):
            element = ValueType.INT64
        return typed(ValueType.ARRAY, list(value), element)
    raise TypeError(f"no GGUF type for {type(value).__name__}")


def encode_string(text):
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return struct.pack("<Q", len(data)) + data


def encode_value(t):
    """The bytes of a value (without its type id)."""
    if t.type == ValueType.STRING:
        return encode_string(t.value)
    if t.type == ValueType.ARRAY:
        out = [struct.pack("<IQ", t.element, len(t.value))]
        if t.element in _NUMPY_DTYPE:
            values = [v.value if isinstance(v, typed) else v for v in t.value]
            out.append(np.asarray(values).astype(_NUMPY_DTYPE[t.element]).tobytes())
        elif t.element == ValueType.STRING:
            out.extend(encode_string(v.value if isinstance(v, typed) else v) for v in t.value)
        else:  # nested arrays
            for v in t.value:
                item = v if isinstance(v, typed) else infer(v)
                if item.type != ValueType.ARRAY:
                    raise TypeError("an array of arrays holds arrays only")
                out.append(encode_value(item))
        return b"".join(out)
    return struct.pack(_SCALAR_FORMAT[t.type], t.value)


def encode_array(array, ggml_type):
    """Encodes a numpy array as F32, F16 or BF16 (BF16: round to nearest even)."""
    a = np.ascontiguousarray(array, dtype=np.float32)
    if ggml_type == GGMLType.F32:
        return a.astype("<f4").tobytes()
    if ggml_type == GGMLType.F16:
        return a.astype("<f2").tobytes()
    if ggml_type == GGMLType.BF16:
        bits = a.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        nan = np.isnan(a)
        out = rounded.astype(np.uint16)
        out[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)  # keep NaN a (quiet) NaN
        return out.astype("<u2").tobytes()
    raise ValueError(f"encode_array: {GGMLType(ggml_type).name} needs its own encoder (scripts/gguf_quant.py)")


def tensor_bytes(ggml_type, shape):
    block, size = BLOCK[GGMLType(ggml_type)]
    row = shape[-1] if shape else 1
    if row % block:
        raise ValueError(f"last dimension {row} is not a multiple of {GGMLType(ggml_type).name}'s block {block}")
    n = 1
    for d in shape:
        n *= d
    return n // block * size


class GGUFWriter:
    def __init__(self, alignment=32):
        if alignment <= 0 or alignment & (alignment - 1):
            raise ValueError("alignment must be a power of two")
        self.alignment = alignment
        self.metadata = {}
        self.tensors = []  # (name, type, shape, bytes)
        if alignment != 32:
            self.add("general.alignment", typed(ValueType.UINT32, alignment))

    def add(self, key, value):
        if key in self.metadata:
            raise KeyError(f"duplicate metadata key {key}")
        self.metadata[key] = infer(value)

    def add_tensor(self, name, ggml_type, shape, data):
        shape = tuple(int(d) for d in shape)
        if len(shape) > 4:
            raise ValueError(f"{name}: at most 4 dimensions")
        if any(t[0] == name for t in self.tensors):
            raise KeyError(f"duplicate tensor {name}")
        expected = tensor_bytes(ggml_type, shape)
        data = bytes(data)
        if len(data) != expected:
            raise ValueError(f"{name}: {len(data)} bytes, {GGMLType(ggml_type).name}{list(shape)} takes {expected}")
        self.tensors.append((name, int(ggml_type), shape, data))

    def add_array_tensor(self, name, array, ggml_type=GGMLType.F32):
        self.add_tensor(name, ggml_type, np.shape(array), encode_array(array, ggml_type))

    def _pad(self, n):
        return (-n) % self.alignment

    def to_bytes(self):
        out = [b"GGUF", struct.pack("<IQQ", 3, len(self.tensors), len(self.metadata))]
        for key, t in self.metadata.items():
            out.append(encode_string(key) + struct.pack("<I", t.type) + encode_value(t))
        offset = 0
        offsets = []
        for name, ggml_type, shape, data in self.tensors:
            offsets.append(offset)
            dims = list(reversed(shape))
            out.append(encode_string(name) + struct.pack("<I", len(dims)) +
                       b"".join(struct.pack("<Q", d) for d in dims) + struct.pack("<IQ", ggml_type, offset))
            offset += len(data) + self._pad(len(data))
        head = b"".join(out)
        body = [head, b"\0" * self._pad(len(head))]
        for (_, _, _, data) in self.tensors:
            body.append(data)
            body.append(b"\0" * self._pad(len(data)))
        return b"".join(body)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())
