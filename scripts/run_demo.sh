#!/usr/bin/env bash
# `make run`: serves the demo repository on 127.0.0.1 and, once the server answers
# GET /v2/health/ready, prints the console's address and one ready-to-paste request per
# model kind. Ctrl-C (SIGINT) or SIGTERM drains and stops it.
#
#   scripts/run_demo.sh [BINARY [REPOSITORY]]      (defaults: build/infera demo-models)
#
# Environment (README "Two commands"):
#   INFERA_HTTP_PORT      KServe HTTP, OpenAI API and the console   (default 8000)
#   INFERA_GRPC_PORT      KServe gRPC                               (default 8001)
#   INFERA_METRICS_PORT   Prometheus /metrics                       (default 8002)
#   INFERA_READY_TIMEOUT  seconds to wait for readiness             (default 300)
set -uo pipefail
BINARY=${1:-build/infera}
REPO=${2:-demo-models}
HTTP_PORT=${INFERA_HTTP_PORT:-8000}
GRPC_PORT=${INFERA_GRPC_PORT:-8001}
METRICS_PORT=${INFERA_METRICS_PORT:-8002}
READY_TIMEOUT=${INFERA_READY_TIMEOUT:-300}

fail() { echo "make run: $*" >&2; exit 2; }
for var in INFERA_HTTP_PORT:$HTTP_PORT INFERA_GRPC_PORT:$GRPC_PORT INFERA_METRICS_PORT:$METRICS_PORT; do
  value=${var#*:}
  [[ $value =~ ^[0-9]{1,5}$ ]] && (( 10#$value >= 1 && 10#$value <= 65535 )) ||
    fail "${var%%:*}=$value is not a port (1 to 65535)"
done
[[ $READY_TIMEOUT =~ ^[0-9]+$ ]] || fail "INFERA_READY_TIMEOUT=$READY_TIMEOUT is not a number of seconds"
[[ $HTTP_PORT != "$GRPC_PORT" && $HTTP_PORT != "$METRICS_PORT" && $GRPC_PORT != "$METRICS_PORT" ]] ||
  fail "INFERA_HTTP_PORT, INFERA_GRPC_PORT and INFERA_METRICS_PORT must differ ($HTTP_PORT, $GRPC_PORT, $METRICS_PORT)"
[[ -x $BINARY ]] || fail "$BINARY is not an executable (make build)"
[[ -d $REPO ]] || fail "$REPO is not a folder (make demo-models)"

# Passive OpenMP waiting: idle LibTorch worker threads sleep instead of spinning on a
# core the HTTP threads need (see docs/torch_backend.md).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
# Job control for this one start: the server gets its own process group with SIGINT at
# its default (a non-interactive shell's background jobs ignore it), so one Ctrl-C reaches
# it once, through the trap below (a second signal would stop it without draining).
set -m
"$BINARY" serve --model-repository "$REPO" --http-address 127.0.0.1 --http-port "$HTTP_PORT" \
  --grpc-address 127.0.0.1 --grpc-port "$GRPC_PORT" --metrics-port "$METRICS_PORT" &
SERVER=$!
set +m
trap 'kill -INT "$SERVER" 2>/dev/null' INT
trap 'kill -TERM "$SERVER" 2>/dev/null' TERM

echo "make run: infera (pid $SERVER) is loading ${REPO}/; the requests to try follow once it is ready" >&2
READY_URL=http://127.0.0.1:${HTTP_PORT}/v2/health/ready
deadline=$((SECONDS + READY_TIMEOUT))
until curl -sf -o /dev/null --max-time 2 "$READY_URL"; do
  if ! kill -0 "$SERVER" 2>/dev/null; then
    wait "$SERVER"
    status=$?
    echo "make run: infera exited (status $status) before it was ready; the log above says why" \
      "(a port in use? INFERA_HTTP_PORT, INFERA_GRPC_PORT and INFERA_METRICS_PORT move them)" >&2
    exit $(( status == 0 ? 1 : status ))
  fi
  if (( SECONDS >= deadline )); then
    echo "make run: infera was not ready after ${READY_TIMEOUT} s (GET $READY_URL still fails;" \
      "the log above says which model failed or is still loading); stopping it" >&2
    kill -TERM "$SERVER" 2>/dev/null
    wait "$SERVER"
    exit 1
  fi
  sleep 0.5
done

H=localhost:${HTTP_PORT}
JSON="-H 'Content-Type: application/json'"
IMAGE=${REPO}/.images/chelsea.jpg
SCRIPTS=$(dirname "$0")
cat <<EOF_BANNER

  infera is ready (pid ${SERVER}), serving the models in ${REPO}/:
    console      http://${H}/console
    KServe v2    HTTP ${H}, gRPC localhost:${GRPC_PORT}; Prometheus http://localhost:${METRICS_PORT}/metrics
    OpenAI API   http://${H}/v1 (chat with the demo LLM "fortune" below)

  One request per kind of model (from $(pwd); answers are JSON):

    # LLM chat (OpenAI /v1/chat/completions; "stream": true for tokens as they come)
    curl -sf ${H}/v1/chat/completions ${JSON} \\
      -d '{"model":"fortune","messages":[{"role":"user","content":"Tell me a fortune."}],"max_tokens":40}'

    # image classification: a JPEG in, the top 5 labels and scores out (resnet18_classify)
    python3 ${SCRIPTS}/image_request.py ${IMAGE} | curl -sf --data-binary @- \\
      -H 'Inference-Header-Content-Length: 256' ${H}/v2/models/resnet18_classify/infer

    # text: a sentence in, a 128-d embedding out (text_embed, here through OpenAI /v1/embeddings)
    curl -sf ${H}/v1/embeddings ${JSON} -d '{"model":"text_embed","input":"The quick brown fox."}'

    # ranking: 13 dense features and 8 categorical ids in, a click score out (ranker)
    curl -sf ${H}/v2/models/ranker/infer ${JSON} -d '{"inputs":[
      {"name":"dense_features","shape":[1,13],"datatype":"FP32","data":[0.1,0.5,0.2,0.9,0,1,0.3,0.7,0.4,0.6,0.8,0.2,0.5]},
      {"name":"categorical_ids","shape":[1,8],"datatype":"INT64","data":[3,14,15,92,65,35,89,79]}]}'

  More (detector, tensor models, bench): README.md. Ctrl-C drains and stops the server.

EOF_BANNER

# Until the server exits (a trapped signal interrupts `wait`; wait again).
while true; do
  wait "$SERVER"
  status=$?
  kill -0 "$SERVER" 2>/dev/null || break
done
exit "$status"
