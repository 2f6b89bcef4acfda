// The KServe v2 (Open Inference Protocol) HTTP/REST tensor codec, with Triton's binary
// tensor data extension: everything an HTTP route needs to turn an infer request body
// into an InferRequest and an InferResponse into a response body.
//
//   request_decoder.h   DecodeInferRequest   body (+ Inference-Header-Content-Length)
//                                            -> InferRequest
//   request_decoder_raw.h DecodeRawInferRequest  raw binary body (header length 0)
//                                            + model config -> InferRequest
//   output_encoding.h   OutputEncoding       which outputs the client wants as binary
//   response_encoder.h  EncodeInferResponse  InferResponse -> body (+ header length)
//
// Usage (in a route):
//   ASSIGN_OR_RETURN(InferRequest request,
//                    DecodeInferRequest(std::move(body), header_length, kMaxElements));
//   OutputEncoding encoding = OutputEncoding::FromRequest(request);
//   ... run the model ...
//   ASSIGN_OR_RETURN(EncodedInferResponse out, EncodeInferResponse(response, encoding));
#ifndef INFERA_CODEC_KSERVE_HTTP_CODEC_H_
#define INFERA_CODEC_KSERVE_HTTP_CODEC_H_

#include "codec/output_encoding.h"
#include "codec/request_decoder.h"
#include "codec/request_decoder_raw.h"
#include "codec/response_encoder.h"

#endif  // INFERA_CODEC_KSERVE_HTTP_CODEC_H_
