// The globals a template can call (builtins.h): Jinja2's range, dict, namespace and
// Hugging Face's raise_exception and strftime_now.
#include <ctime>

#include "jinja/builtins.h"
#include "jinja/evaluator.h"

namespace infera::jinja {
namespace {

// Jinja2's sandbox refuses ranges longer than this.
constexpr int64_t kMaxRange = 100000;

Value Range(Evaluator& ev, CallArgs& args) {
  if (!args.keyword.empty()) throw Error("range() takes no keyword arguments");
  for (const Value& v : args.positional) {
    if (!v.is_int() && !v.is_bool()) throw Error("range() needs integers, got " + std::string(v.TypeName()));
  }
  int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else if (args.positional.size() == 2 || args.positional.size() == 3) {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() == 3) step = args.positional[2].as_int();
  } else {
    throw Error("range expected 1 to 3 arguments, got " + std::to_string(args.positional.size()));
  }
  if (step == 0) throw Error("range() arg 3 must not be zero");
  const long double count = step > 0 ? (static_cast<long double>(stop) - start + step - 1) / step
                                     : (static_cast<long double>(start) - stop - step - 1) / -step;
  if (count > kMaxRange) throw Error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  ValueList out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(Value::Int(i));
  ev.CountIterations(static_cast<int64_t>(out.size()));
  return Value::List(std::move(out));
}

Value Dict(Evaluator&, CallArgs& args) {
  Value out = Value::Dict();
  for (const Value& v : args.positional) {
    if (!v.is_dict()) throw Error("dict() positional argument must be a mapping here");
    for (const auto& [k, x] : v.as_dict()) out.Set(k, x);
  }
  for (const auto& [k, v] : args.keyword) out.Set(k, v);
  return out;
}

Value Namespace(Evaluator&, CallArgs& args) {
  Value ns = Value::Dict({}, /*is_namespace=*/true);
  for (const Value& v : args.positional) {
    if (!v.is_dict()) throw Error("namespace() positional argument must be a mapping");
    for (const auto& [k, x] : v.as_dict()) ns.Set(k, x);
  }
  for (const auto& [k, v] : args.keyword) ns.Set(k, v);
  return ns;
}

Value RaiseException(Evaluator&, CallArgs& args) { throw Error(args.Get(0, "message").Str()); }

Value StrftimeNow(Evaluator& ev, CallArgs& args) {
  const Value format = args.Get(0, "format");
  if (!format.is_string()) throw Error("strftime_now() needs a format string");
  if (ev.options().strftime_now) return ev.MakeString(ev.options().strftime_now(format.as_string()));
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[256];
  const size_t n = std::strftime(buf, sizeof(buf), format.as_string().c_str(), &local);
  return Value::String(std::string(buf, n));
}

}  // namespace

ValueDict Globals() {
  return {{"range", Value::Callable("range", Range)},
          {"dict", Value::Callable("dict", Dict)},
          {"namespace", Value::Callable("namespace", Namespace)},
          {"raise_exception", Value::Callable("raise_exception", RaiseException)},
          {"strftime_now", Value::Callable("strftime_now", StrftimeNow)}};
}

}  // namespace infera::jinja
