// Makes absl::Mutex visible to ThreadSanitizer (TSan builds only: INFERA_SANITIZE=thread).
//
// Debian's abseil is a prebuilt, uninstrumented shared library, so TSan sees none of the
// happens-before edges absl::Mutex creates and would report every ABSL_GUARDED_BY access
// as a race. This file interposes the Mutex / CondVar entry points the code uses: each
// calls the library's own implementation (found with dlsym(RTLD_NEXT)) and tells TSan
// that the mutex was acquired (__tsan_acquire after locking) or released
// (__tsan_release before unlocking). Test executables link it with -rdynamic, so the
// library's internal calls (absl::Notification, MutexLock) reach these definitions too.
//
// Conditions (LockWhen, Await) are evaluated inside abseil, under the mutex but at
// moments the shim cannot see (the waiter before it lets go of the mutex, or the thread
// that unlocks it, on the waiter's behalf). Each Condition is therefore wrapped so that
// TSan ignores the accesses of its evaluation: a condition is a small read-only
// predicate over guarded state, which every writer changes under the same mutex.
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/base/config.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

#define INFERA_TSAN_STR2(x) #x
#define INFERA_TSAN_STR(x) INFERA_TSAN_STR2(x)

// The library's definition of `absl::<ns>::<suffix>` (an Itanium-mangled name without
// the "_ZN4absl<ns>" prefix, which depends on abseil's inline namespace).
// `prefix` is "_ZN" for a plain member function, "_ZNK" for a const one.
template <typename Fn>
Fn Real(const char* suffix, const char* prefix = "_ZN") {
#ifdef ABSL_OPTION_INLINE_NAMESPACE_NAME
  const char* ns = INFERA_TSAN_STR(ABSL_OPTION_INLINE_NAMESPACE_NAME);
  const std::string name =
      std::string(prefix) + "4absl" + std::to_string(std::strlen(ns)) + ns + suffix;
#else
  const std::string name = std::string(prefix) + "4absl" + suffix;
#endif
  void* fn = dlsym(RTLD_NEXT, name.c_str());
  if (fn == nullptr) {
    std::fprintf(stderr, "absl_mutex_annotations: %s not found\n", name.c_str());
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();

// `cond`, evaluated with TSan ignoring its reads (see the top).
class QuietCondition {
 public:
  explicit QuietCondition(const absl::Condition& cond)
      : cond_(&cond), wrapped_(&Eval, static_cast<void*>(this)) {}
  const absl::Condition& get() const { return wrapped_; }

 private:
  // The void* form of Condition: abseil's (uninstrumented) code calls it, so nothing of
  // the wrapper is read by instrumented code outside the ignored region.
  static bool Eval(void* arg) {
    __tsan_ignore_thread_begin();
    const bool value = static_cast<QuietCondition*>(arg)->cond_->Eval();
    __tsan_ignore_thread_end();
    return value;
  }
  const absl::Condition* cond_;
  absl::Condition wrapped_;
};

#define INFERA_REAL(type, ...)                          \
  static const auto real = Real<type>(__VA_ARGS__); \
  (void)0

}  // namespace

namespace absl {
ABSL_NAMESPACE_BEGIN

void Mutex::Lock() {
  INFERA_REAL(void (*)(Mutex*), "5Mutex4LockEv");
  real(this);
  __tsan_acquire(this);
}

void Mutex::ReaderLock() {
  INFERA_REAL(void (*)(Mutex*), "5Mutex10ReaderLockEv");
  real(this);
  __tsan_acquire(this);
}

bool Mutex::TryLock() {
  INFERA_REAL(bool (*)(Mutex*), "5Mutex7TryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

bool Mutex::ReaderTryLock() {
  INFERA_REAL(bool (*)(Mutex*), "5Mutex13ReaderTryLockEv");
  const bool locked = real(this);
  if (locked) __tsan_acquire(this);
  return locked;
}

void Mutex::Unlock() {
  INFERA_REAL(void (*)(Mutex*), "5Mutex6UnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::ReaderUnlock() {
  INFERA_REAL(void (*)(Mutex*), "5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex8LockWhenERKNS0_9ConditionE");
  real(this, QuietCondition(cond).get());
  __tsan_acquire(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  real(this, QuietCondition(cond).get());
  __tsan_acquire(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Duration),
              "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  const bool met = real(this, QuietCondition(cond).get(), timeout);
  __tsan_acquire(this);  // held on return either way
  return met;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Time),
              "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  const bool met = real(this, QuietCondition(cond).get(), deadline);
  __tsan_acquire(this);
  return met;
}

void Mutex::Await(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, QuietCondition(cond).get());
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Duration),
              "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  const bool met = real(this, QuietCondition(cond).get(), timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Time),
              "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(this);
  const bool met = real(this, QuietCondition(cond).get(), deadline);
  __tsan_acquire(this);
  return met;
}

void CondVar::Wait(Mutex* mu) {
  INFERA_REAL(void (*)(CondVar*, Mutex*), "7CondVar4WaitEPNS0_5MutexE");
  __tsan_release(mu);
  real(this, mu);
  __tsan_acquire(mu);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  INFERA_REAL(bool (*)(CondVar*, Mutex*, Duration),
              "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, timeout);
  __tsan_acquire(mu);
  return timed_out;
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  INFERA_REAL(bool (*)(CondVar*, Mutex*, Time),
              "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  __tsan_release(mu);
  const bool timed_out = real(this, mu, deadline);
  __tsan_acquire(mu);
  return timed_out;
}

// Notification's waits return at once, without touching the mutex, when Notify() has
// already run (an uninstrumented atomic load): release in Notify, acquire after a wait
// that saw the notification. (HasBeenNotified() is inline and stays invisible.)
void Notification::Notify() {
  INFERA_REAL(void (*)(Notification*), "12Notification6NotifyEv");
  __tsan_release(this);
  real(this);
}

void Notification::WaitForNotification() const {
  INFERA_REAL(void (*)(const Notification*), "12Notification19WaitForNotificationEv", "_ZNK");
  real(this);
  __tsan_acquire(const_cast<Notification*>(this));
}

bool Notification::WaitForNotificationWithTimeout(Duration timeout) const {
  INFERA_REAL(bool (*)(const Notification*, Duration),
              "12Notification30WaitForNotificationWithTimeoutENS0_8DurationE", "_ZNK");
  const bool notified = real(this, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

bool Notification::WaitForNotificationWithDeadline(Time deadline) const {
  INFERA_REAL(bool (*)(const Notification*, Time),
              "12Notification31WaitForNotificationWithDeadlineENS0_4TimeE", "_ZNK");
  const bool notified = real(this, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(this));
  return notified;
}

ABSL_NAMESPACE_END
}  // namespace absl
