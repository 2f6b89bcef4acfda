// CqTag: what infera puts on a gRPC completion queue as a tag. The thread polling the
// queue calls Proceed(ok) with the operation's outcome (grpc::CompletionQueue::Next).
//
// MemberTag<T> binds a tag to one member function of the call object that owns it, so a
// call object has one tag per kind of operation it starts (read, write, finish, ...).
// The tag is a member of the object: it lives exactly as long as the call, which must not
// be deleted while an operation naming one of its tags is outstanding.
//
// Usage:
//   MemberTag<UnaryInferCall> finish_tag_{this, &UnaryInferCall::OnFinished};
//   responder_.Finish(buffer, grpc::Status::OK, &finish_tag_);
//   ... on the polling thread: static_cast<CqTag*>(tag)->Proceed(ok);
#ifndef INFERA_GRPC_CQ_TAG_H_
#define INFERA_GRPC_CQ_TAG_H_

namespace infera {

class CqTag {
 public:
  virtual void Proceed(bool ok) = 0;

 protected:
  ~CqTag() = default;
};

template <typename T>
class MemberTag final : public CqTag {
 public:
  MemberTag(T* object, void (T::*method)(bool)) : object_(object), method_(method) {}
  void Proceed(bool ok) override { (object_->*method_)(ok); }

 private:
  T* const object_;
  void (T::*const method_)(bool);
};

}  // namespace infera

#endif  // INFERA_GRPC_CQ_TAG_H_
