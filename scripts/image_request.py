#!/usr/bin/env python3
"""Writes to stdout a KServe v2 HTTP infer request that sends an image file (JPEG, PNG)
as one BYTES element and asks for every output as JSON, so that the answer is readable:

    python3 scripts/image_request.py demo-models/.images/chelsea.jpg | curl -s --data-binary @- \\
      -H 'Inference-Header-Content-Length: 256' localhost:8000/v2/models/resnet18_classify/infer

The request is the JSON header, padded with spaces to 256 bytes (so the curl line needs no
arithmetic), then the element: its length as 4 little-endian bytes and the file's bytes
(the binary tensor extension, README "Pipelines"). Python's standard library only."""
import argparse
import json
import struct
import sys

HEADER_BYTES = 256


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", help="the image file")
    parser.add_argument("--input", default="IMAGE", help="the model's BYTES input (default IMAGE)")
    args = parser.parse_args()
    with open(args.image, "rb") as f:
        data = f.read()
    header = json.dumps({"inputs": [{"name": args.input, "shape": [1, 1], "datatype": "BYTES",
                                     "parameters": {"binary_data_size": len(data) + 4}}],
                         "parameters": {"binary_data_output": False}}, separators=(",", ":"))
    if len(header) > HEADER_BYTES:
        sys.exit(f"image_request.py: the header is {len(header)} bytes, over {HEADER_BYTES}")
    sys.stdout.buffer.write(header.ljust(HEADER_BYTES).encode() + struct.pack("<I", len(data)) + data)


if __name__ == "__main__":
    main()
