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
// Conditions (LockWhen, Await) may be evaluated by the thread that unlocks the mutex,
// reading state the waiting thread set up before it waited: a waiter releases before
// it waits, and Unlock acquires before it evaluates waiters' conditions, so that read is
// ordered. The price is a few happens-before edges a pure lock/unlock model would not
// have (races hidden, never invented).
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
  __tsan_acquire(this);  // waiters' conditions run here (see the top)
  real(this);
}

void Mutex::ReaderUnlock() {
  INFERA_REAL(void (*)(Mutex*), "5Mutex12ReaderUnlockEv");
  __tsan_release(this);
  __tsan_acquire(this);
  real(this);
}

void Mutex::LockWhen(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex8LockWhenERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, cond);
  __tsan_acquire(this);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex14ReaderLockWhenERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, cond);
  __tsan_acquire(this);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Duration),
              "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  const bool met = real(this, cond, timeout);
  __tsan_acquire(this);  // held on return either way
  return met;
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Time),
              "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(this);
  const bool met = real(this, cond, deadline);
  __tsan_acquire(this);
  return met;
}

void Mutex::Await(const Condition& cond) {
  INFERA_REAL(void (*)(Mutex*, const Condition&), "5Mutex5AwaitERKNS0_9ConditionE");
  __tsan_release(this);
  real(this, cond);
  __tsan_acquire(this);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Duration),
              "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  __tsan_release(this);
  const bool met = real(this, cond, timeout);
  __tsan_acquire(this);
  return met;
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  INFERA_REAL(bool (*)(Mutex*, const Condition&, Time),
              "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  __tsan_release(this);
  const bool met = real(this, cond, deadline);
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
