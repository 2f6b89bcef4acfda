// INFERA_CHECK: an internal invariant that holds unless infera itself has a bug (block
// pool reference counts, KV-cache block accounting, queue sizes). Unlike assert() it is
// active in every build type, Release included: carrying on with a corrupted invariant
// (a block handed out twice, a queue size that wrapped) turns into wrong answers or
// memory corruption later, far from the cause. A failure logs one error line
//   CHECK failed: <condition> <message> (at file:line)
// and aborts the process.
//
//   INFERA_CHECK(n <= num_free_) << "allocating " << n << " of " << num_free_ << " free";
//
// Only for conditions that are cheap to evaluate on the path they guard, and never for
// anything a client or a config can cause: those are Status errors.
//
// Thread-safe.
#ifndef INFERA_COMMON_CHECK_H_
#define INFERA_COMMON_CHECK_H_

#include <sstream>

namespace infera::check_internal {

// Collects the message; its destructor logs it and aborts.
class CheckFailure {
 public:
  CheckFailure(const char* condition, const char* file, int line);
  [[noreturn]] ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  std::ostream& stream() { return stream_; }

 private:
  const char* condition_;
  const char* file_;
  int line_;
  std::ostringstream stream_;
};

// Lets the macro swallow a stream expression in a ternary.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace infera::check_internal

#define INFERA_CHECK(condition)                                                  \
  (condition) ? (void)0                                                          \
              : ::infera::check_internal::Voidify() &                            \
                    ::infera::check_internal::CheckFailure(#condition, __FILE__, \
                                                           __LINE__)             \
                        .stream()

#endif  // INFERA_COMMON_CHECK_H_
