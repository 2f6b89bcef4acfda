"""scripts/gguf_quant.py against src/quant, byte for byte and bit for bit.

For every GGUF type: the numpy encoder writes the same blocks as the C++ reference
quantiser (quant_tool quantize), and the C++ decoder reads numpy's blocks — and blocks of
random bytes — into exactly the floats numpy's decoder gives (quant_tool dequantize).
QUANT_TOOL names the tool (set by CMake); else it is looked for next to INFERA_BINARY.
"""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import gguf_quant  # noqa: E402


def _tool():
    path = os.environ.get("QUANT_TOOL")
    if not path and os.environ.get("INFERA_BINARY"):
        path = str(pathlib.Path(os.environ["INFERA_BINARY"]).parent / "src" / "quant" / "quant_tool")
    if not path or not os.path.exists(path):
        pytest.fail("quant_tool not built (ninja -C build quant_tool; set QUANT_TOOL)")
    return path


def _run(mode, name, k, data, tmp_path):
    src, dst = tmp_path / f"{mode}.in", tmp_path / f"{mode}.out"
    src.write_bytes(data.tobytes())
    subprocess.run([_tool(), mode, name, str(k), str(src), str(dst)], check=True)
    return dst.read_bytes()


def _rows(k, seed):
    """Rows that reach the corners: normal values at several scales, a zero block, one
    sign, ties, large and tiny magnitudes."""
    rng = np.random.default_rng(seed)
    rows = [rng.standard_normal(k) * s for s in (1.0, 0.02, 300.0)]
    rows.append(np.abs(rng.standard_normal(k)))
    rows.append(-np.abs(rng.standard_normal(k)))
    ties = np.round(rng.standard_normal(k) * 4) / 2
    rows.append(ties)
    zero_block = rng.standard_normal(k)
    zero_block[:256] = 0.0
    zero_block[1] = -0.0
    rows.append(zero_block)
    rows.append(rng.standard_normal(k) * 1e-6)
    return np.stack(rows).astype(np.float32)


@pytest.mark.parametrize("name", sorted(gguf_quant.TYPES))
def test_numpy_encoder_matches_cpp_quantiser(name, tmp_path):
    k = 512
    x = _rows(k, 1)
    ours = gguf_quant.quantize(name, x)
    assert ours.shape == (len(x), gguf_quant.row_bytes(name, k))
    theirs = np.frombuffer(_run("quantize", name, k, x, tmp_path), dtype=np.uint8).reshape(ours.shape)
    mismatch = np.argwhere(ours != theirs)
    assert len(mismatch) == 0, f"{name}: first differing (row, byte) {mismatch[:3].tolist()}"


@pytest.mark.parametrize("name", sorted(gguf_quant.TYPES))
def test_cpp_decoder_matches_numpy_decoder(name, tmp_path):
    k = 512
    encoded = gguf_quant.quantize(name, _rows(k, 2))
    rng = np.random.default_rng(3)
    noise = rng.integers(0, 256, size=(4, encoded.shape[1]), dtype=np.uint8)
    if name in ("F16", "BF16", "F32"):
        noise = gguf_quant.quantize(name, rng.standard_normal((4, k)).astype(np.float32))
    else:  # random codes, finite half scales
        _, elements, size = gguf_quant.TYPES[name]
        halves = {"Q6_K": [208], "Q8_0": [0], "Q4_0": [0], "Q5_0": [0]}.get(name, [0, 2])
        view = noise.reshape(4, k // elements, size)
        for h in halves:
            scale = rng.uniform(-0.1, 0.1, size=view.shape[:2]).astype(np.float16)
            view[..., h:h + 2] = scale[..., None].view(np.uint8).reshape(view.shape[:2] + (2,))
    blocks = np.concatenate([encoded, noise])
    ours = gguf_quant.dequantize(name, blocks, k)
    theirs = np.frombuffer(_run("dequantize", name, k, blocks, tmp_path), dtype=np.float32).reshape(ours.shape)
    assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32)), name


def test_round_trip_is_close_and_sizes_are_refused():
    x = _rows(256, 4)[0]
    for name in gguf_quant.TYPES:
        back = gguf_quant.dequantize(name, gguf_quant.quantize(name, x), 256)
        assert np.max(np.abs(back - x)) <= 0.15 * np.max(np.abs(x)), name
    with pytest.raises(ValueError, match="not a multiple of its block size 256"):
        gguf_quant.quantize("Q4_K", np.zeros(100, dtype=np.float32))
    with pytest.raises(ValueError, match="need 144 bytes"):
        gguf_quant.dequantize("Q4_K", np.zeros(10, dtype=np.uint8), 256)
