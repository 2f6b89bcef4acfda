#include "manager/response_cache.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "manager/response_cache_key.h"

namespace infera {
namespace {

uint64_t ConstantHash(std::string_view) { return 42; }  // every key collides

ResponseCacheKey Key(std::string bytes, const CacheKeyHash& hash = DefaultCacheKeyHash) {
  return ResponseCacheKey::FromBytes(std::move(bytes), hash);
}

std::vector<Tensor> Outputs(std::string_view bytes) {
  return {Tensor{"out", DataType::kUint8, {static_cast<int64_t>(bytes.size())}, Buffer::Copy(bytes.data(), bytes.size())}};
}

std::string Data(const std::shared_ptr<const CachedResponse>& response) {
  return response == nullptr ? "<miss>" : std::string(response->outputs.at(0).data.AsStringView());
}

// The capacity that holds exactly `n` entries of a 4-byte key and a 100-byte output.
uint64_t CapacityFor(int n) { return n * ResponseCache::EntryCharge(4, Outputs(std::string(100, 'x'))); }

TEST(ResponseCacheTest, HitReturnsTheInsertedOutputs) {
  ResponseCache cache({CapacityFor(4)});
  EXPECT_EQ(cache.Lookup(Key("key1")), nullptr);
  EXPECT_EQ(cache.Insert(Key("key1"), Outputs(std::string(100, 'a'))), ResponseCache::InsertResult::kInserted);
  EXPECT_EQ(Data(cache.Lookup(Key("key1"))), std::string(100, 'a'));
  EXPECT_EQ(cache.Lookup(Key("key2")), nullptr);
  const ResponseCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.lookups, 3u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.bytes, ResponseCache::EntryCharge(4, Outputs(std::string(100, 'a'))));
}

TEST(ResponseCacheTest, EvictsTheLeastRecentlyUsedWhenBytesRunOut) {
  ResponseCache cache({CapacityFor(2)});
  cache.Insert(Key("keyA"), Outputs(std::string(100, 'a')));
  cache.Insert(Key("keyB"), Outputs(std::string(100, 'b')));
  ASSERT_NE(cache.Lookup(Key("keyA")), nullptr);  // A is now the most recent
  EXPECT_EQ(cache.Insert(Key("keyC"), Outputs(std::string(100, 'c'))), ResponseCache::InsertResult::kInserted);
  EXPECT_EQ(cache.Lookup(Key("keyB")), nullptr);
  EXPECT_EQ(Data(cache.Lookup(Key("keyA"))), std::string(100, 'a'));
  EXPECT_EQ(Data(cache.Lookup(Key("keyC"))), std::string(100, 'c'));
  const ResponseCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_LE(stats.bytes, stats.capacity_bytes);
}

TEST(ResponseCacheTest, ALargeEntryEvictsAsManyAsItNeeds) {
  ResponseCache cache({CapacityFor(3)});
  cache.Insert(Key("keyA"), Outputs(std::string(100, 'a')));
  cache.Insert(Key("keyB"), Outputs(std::string(100, 'b')));
  cache.Insert(Key("keyC"), Outputs(std::string(100, 'c')));
  // Twice the data of one entry: A and B (the two oldest) must go, C stays.
  const std::string big(100 + CapacityFor(1), 'z');
  ASSERT_LE(ResponseCache::EntryCharge(4, Outputs(big)), CapacityFor(1) * 2 + 200);
  EXPECT_EQ(cache.Insert(Key("keyD"), Outputs(big)), ResponseCache::InsertResult::kInserted);
  EXPECT_EQ(cache.Lookup(Key("keyA")), nullptr);
  EXPECT_EQ(cache.Lookup(Key("keyB")), nullptr);
  EXPECT_NE(cache.Lookup(Key("keyC")), nullptr);
  EXPECT_EQ(Data(cache.Lookup(Key("keyD"))), big);
  EXPECT_LE(cache.GetStats().bytes, cache.GetStats().capacity_bytes);
}

TEST(ResponseCacheTest, AnEntryLargerThanTheCacheIsRefusedAndEvictsNothing) {
  ResponseCache cache({CapacityFor(2)});
  cache.Insert(Key("keyA"), Outputs(std::string(100, 'a')));
  EXPECT_EQ(cache.Insert(Key("keyB"), Outputs(std::string(CapacityFor(2), 'b'))),
            ResponseCache::InsertResult::kTooLarge);
  EXPECT_EQ(cache.Lookup(Key("keyB")), nullptr);
  EXPECT_NE(cache.Lookup(Key("keyA")), nullptr);
  EXPECT_EQ(cache.GetStats().refused_too_large, 1u);
  EXPECT_EQ(cache.GetStats().evictions, 0u);
}

TEST(ResponseCacheTest, ASecondInsertOfTheSameKeyKeepsTheFirst) {
  ResponseCache cache({CapacityFor(2)});
  cache.Insert(Key("keyA"), Outputs(std::string(100, 'a')));
  EXPECT_EQ(cache.Insert(Key("keyA"), Outputs(std::string(100, 'z'))), ResponseCache::InsertResult::kAlreadyPresent);
  EXPECT_EQ(Data(cache.Lookup(Key("keyA"))), std::string(100, 'a'));
  EXPECT_EQ(cache.GetStats().entries, 1u);
}

TEST(ResponseCacheTest, CollidingHashesNeverShareAnAnswer) {
  ResponseCache cache({CapacityFor(3), ConstantHash});
  cache.Insert(Key("keyA", ConstantHash), Outputs(std::string(100, 'a')));
  cache.Insert(Key("keyB", ConstantHash), Outputs(std::string(100, 'b')));
  EXPECT_EQ(Data(cache.Lookup(Key("keyA", ConstantHash))), std::string(100, 'a'));
  EXPECT_EQ(Data(cache.Lookup(Key("keyB", ConstantHash))), std::string(100, 'b'));
  EXPECT_EQ(cache.Lookup(Key("keyC", ConstantHash)), nullptr);
  // Eviction of one colliding key leaves the other findable.
  cache.Insert(Key("keyC", ConstantHash), Outputs(std::string(100, 'c')));
  cache.Insert(Key("keyD", ConstantHash), Outputs(std::string(100, 'd')));
  EXPECT_EQ(cache.Lookup(Key("keyA", ConstantHash)), nullptr);
  EXPECT_EQ(Data(cache.Lookup(Key("keyD", ConstantHash))), std::string(100, 'd'));
}

TEST(ResponseCacheTest, InsertCopiesOutputsInsteadOfViewingTheBatch) {
  ResponseCache cache({1 << 20});
  const std::string batch(4096, 'q');
  Buffer whole = Buffer::Copy(batch.data(), batch.size());
  std::vector<Tensor> outputs = {Tensor{"out", DataType::kUint8, {16}, whole.Slice(32, 16)}};
  cache.Insert(Key("keyA"), outputs);
  std::shared_ptr<const CachedResponse> hit = cache.Lookup(Key("keyA"));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->outputs[0].data.size(), 16u);
  EXPECT_NE(hit->outputs[0].data.data(), whole.data() + 32);
  EXPECT_EQ(hit->outputs[0].shape, Shape{16});
  EXPECT_EQ(hit->outputs[0].dtype, DataType::kUint8);
}

TEST(ResponseCacheTest, AnEvictedEntryStaysValidForAHitThatHoldsIt) {
  ResponseCache cache({CapacityFor(1)});
  cache.Insert(Key("keyA"), Outputs(std::string(100, 'a')));
  std::shared_ptr<const CachedResponse> held = cache.Lookup(Key("keyA"));
  cache.Insert(Key("keyB"), Outputs(std::string(100, 'b')));
  EXPECT_EQ(cache.Lookup(Key("keyA")), nullptr);
  EXPECT_EQ(Data(held), std::string(100, 'a'));
}

// Many threads insert and look up overlapping keys: every hit is the answer of its own
// key and the byte bound holds throughout (TSan runs this too).
TEST(ResponseCacheTest, ConcurrentUseKeepsAnswersAndTheBound) {
  ResponseCache cache({CapacityFor(8), [](std::string_view bytes) { return bytes.size() % 3; }});
  std::atomic<int> wrong{0};
  std::atomic<int> over_bound{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string name = "k" + std::to_string((i * 7 + t) % 24);
        ResponseCacheKey key = ResponseCacheKey::FromBytes(name, cache.hash());
        std::shared_ptr<const CachedResponse> hit = cache.Lookup(key);
        if (hit == nullptr) {
          std::string value = name;
          value.resize(100, '.');
          cache.Insert(std::move(key), Outputs(value));
        } else if (Data(hit).rfind(name + ".", 0) != 0) {
          wrong.fetch_add(1);
        }
        const ResponseCache::Stats stats = cache.GetStats();
        if (stats.bytes > stats.capacity_bytes) over_bound.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(over_bound.load(), 0);
  const ResponseCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.lookups, 8000u);
  EXPECT_GT(stats.hits, 0u);
  EXPECT_GT(stats.evictions, 0u);
}

// --- keys ---

InferRequest Request() {
  InferRequest request;
  request.model_name = "m";
  const std::string bytes = "abcd";
  request.inputs.push_back(Tensor{"INPUT0", DataType::kUint8, {1, 4}, Buffer::Copy(bytes.data(), bytes.size())});
  return request;
}

std::string KeyBytes(const InferRequest& request, std::string_view model = "m", int64_t version = 1) {
  return ResponseCacheKey::ForRequest(model, version, request, DefaultCacheKeyHash).bytes();
}

TEST(ResponseCacheKeyTest, EverythingTheAnswerDependsOnIsInTheKey) {
  const std::string base = KeyBytes(Request());
  EXPECT_EQ(KeyBytes(Request()), base);
  EXPECT_NE(KeyBytes(Request(), "other"), base);
  EXPECT_NE(KeyBytes(Request(), "m", 2), base);
  InferRequest r = Request();
  r.inputs[0].data = Buffer::Copy("abce", 4);
  EXPECT_NE(KeyBytes(r), base);
  r = Request();
  r.inputs[0].shape = {2, 2};
  EXPECT_NE(KeyBytes(r), base);
  r = Request();
  r.inputs[0].dtype = DataType::kInt8;
  EXPECT_NE(KeyBytes(r), base);
  r = Request();
  r.inputs[0].name = "INPUT1";
  EXPECT_NE(KeyBytes(r), base);
  r = Request();
  r.outputs.push_back(RequestedOutput{"OUTPUT0", {}});
  const std::string one_output = KeyBytes(r);
  EXPECT_NE(one_output, base);
  r.outputs[0].parameters["classification"] = int64_t{3};
  const std::string classify3 = KeyBytes(r);
  EXPECT_NE(classify3, one_output);
  r.outputs[0].parameters["classification"] = int64_t{5};
  EXPECT_NE(KeyBytes(r), classify3);
  r = Request();
  r.parameters["custom"] = std::string("x");
  EXPECT_NE(KeyBytes(r), base);  // an unknown parameter is kept: it may change the answer
}

TEST(ResponseCacheKeyTest, SchedulingAndTransportParametersAreLeftOut) {
  const InferRequest plain = [] {
    InferRequest r = Request();
    r.outputs.push_back(RequestedOutput{"OUTPUT0", {}});
    return r;
  }();
  InferRequest r = plain;
  r.id = "some-id";
  r.parameters["priority"] = int64_t{2};
  r.parameters["timeout"] = int64_t{1000};
  r.parameters["binary_data_output"] = true;
  r.parameters["routing_key"] = std::string("user-7");
  r.outputs[0].parameters["binary_data"] = true;
  r.outputs[0].parameters["shared_memory_region"] = std::string("region");
  r.outputs[0].parameters["shared_memory_byte_size"] = int64_t{16};
  EXPECT_EQ(KeyBytes(r), KeyBytes(plain));
}

TEST(ResponseCacheKeyTest, FieldBoundariesCannotBeShifted) {
  InferRequest a = Request();
  a.inputs[0].name = "IN";
  a.inputs[0].data = Buffer::Copy("Xabc", 4);
  InferRequest b = Request();
  b.inputs[0].name = "INX";
  b.inputs[0].data = Buffer::Copy("abc", 3);
  EXPECT_NE(KeyBytes(a), KeyBytes(b));
  InferRequest c = Request();
  c.parameters["a"] = std::string("bc");
  InferRequest d = Request();
  d.parameters["ab"] = std::string("c");
  EXPECT_NE(KeyBytes(c), KeyBytes(d));
  InferRequest e = Request();
  e.parameters["p"] = int64_t{1};
  InferRequest f = Request();
  f.parameters["p"] = true;
  EXPECT_NE(KeyBytes(e), KeyBytes(f));
}

}  // namespace
}  // namespace infera
