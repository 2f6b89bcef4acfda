#include "tracing/http_post.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/str_cat.h"

namespace infera {
namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) {
    return absl::InvalidArgumentError(StrCat("'", url, "' is not an http:// URL"));
  }
  std::string_view rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  HttpUrl parsed;
  parsed.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos) {
    parsed.host = std::string(authority);
    parsed.port = "80";
  } else {
    parsed.host = std::string(authority.substr(0, colon));
    parsed.port = std::string(authority.substr(colon + 1));
  }
  if (parsed.host.empty() || parsed.port.empty()) {
    return absl::InvalidArgumentError(StrCat("'", url, "' has no host or port"));
  }
  return parsed;
}

absl::StatusOr<int> HttpPost(const HttpUrl& url, std::string_view content_type, std::string body,
                             std::chrono::milliseconds timeout) {
  // Asynchronous operations on a private io_context: beast::tcp_stream enforces its
  // expiry only on async operations, and a collector that accepts and never answers
  // must not hold the exporter (or shutdown) longer than `timeout` per step.
  net::io_context io;
  net::ip::tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  http::request<http::string_body> request{http::verb::post, url.target, 11};
  request.set(http::field::host, url.host);
  request.set(http::field::content_type, std::string(content_type));
  request.body() = std::move(body);
  request.prepare_payload();
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  absl::Status failure;
  auto fail = [&](std::string_view step, const beast::error_code& ec) {
    failure = absl::UnavailableError(StrCat(step, " ", url.host, ":", url.port, ": ", ec.message()));
  };
  resolver.async_resolve(url.host, url.port, [&](beast::error_code ec, auto endpoints) {
    if (ec) return fail("resolve", ec);
    stream.expires_after(timeout);
    stream.async_connect(endpoints, [&](beast::error_code connect_ec, auto) {
      if (connect_ec) return fail("connect", connect_ec);
      stream.expires_after(timeout);
      http::async_write(stream, request, [&](beast::error_code write_ec, size_t) {
        if (write_ec) return fail("write", write_ec);
        stream.expires_after(timeout);
        http::async_read(stream, buffer, response, [&](beast::error_code read_ec, size_t) {
          if (read_ec) return fail("read", read_ec);
          beast::error_code ignored;
          stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
        });
      });
    });
  });
  io.run();
  if (!failure.ok()) return failure;
  return static_cast<int>(response.result_int());
}

}  // namespace infera
