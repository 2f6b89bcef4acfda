#!/usr/bin/env bash
# `make run`: serves the demo repository on 127.0.0.1:8000 and prints ready-to-paste
# requests once the server is ready. Ctrl-C (SIGINT) drains and stops it.
set -euo pipefail
BINARY=${1:-build/infera}
REPO=${2:-demo-models}
PORT=${INFERA_HTTP_PORT:-8000}

cat <<EOF_HELP

  infera is starting on http://127.0.0.1:${PORT} with the models in ${REPO}/
  When the log says "server is ready", try (in another terminal):

    curl -s localhost:${PORT}/v2/models/simple
    curl -s -X POST localhost:${PORT}/v2/models/simple/infer -H 'Content-Type: application/json' -d '{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}'

  OUTPUT0 is INPUT0 + INPUT1 and OUTPUT1 is INPUT0 - INPUT1. Other demo models:
  resnet18, ranker, text_encoder, identity_fp32 (GET /v2/models/<name> shows their inputs).
  Pipelines (JPEG / sentence in, labels / embedding / boxes out; README "Pipelines"):
    curl -s --data-binary @${REPO}/.images/chelsea.jpg -H 'Inference-Header-Content-Length: 0' localhost:${PORT}/v2/models/resnet18_classify/infer --output -
    curl -s localhost:${PORT}/v1/embeddings -H 'Content-Type: application/json' -d '{"model":"text_embed","input":"The quick brown fox."}'

EOF_HELP
# Passive OpenMP waiting: idle LibTorch worker threads sleep instead of spinning on a
# core the HTTP threads need (see docs/torch_backend.md).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
exec "$BINARY" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port "$PORT" \
  --grpc-address 127.0.0.1
