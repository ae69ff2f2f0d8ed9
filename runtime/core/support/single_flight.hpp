// An in-memory cache in which concurrent requests for one key share one computation: the first
// caller runs the factory, the others wait for its result instead of repeating the work (compiling
// the same kernel twice, loading the same module twice).
//
// Thread safety: every member may be called from any thread. No lock is held while a factory runs,
// so factories for different keys run in parallel; a hit takes a shared (reader) lock for one hash
// lookup. A factory must not ask the same SingleFlight for its own key (it would wait for itself).
//
// Ownership: values are immutable once made and shared; a value lives as long as the cache entry or
// any caller still holds its pointer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>
#include <utility>

namespace ptxrt {

template <class Key, class Value, class Hash = std::hash<Key>>
class SingleFlight {
 public:
  using Pointer = std::shared_ptr<const Value>;

  SingleFlight() = default;
  SingleFlight(const SingleFlight&) = delete;
  SingleFlight& operator=(const SingleFlight&) = delete;

  // Returns the cached value for `key`, or makes it with `factory()` (which returns a Value, or a
  // shared_ptr to one) exactly once however many threads ask at the same time. If the factory
  // throws, the caller and every waiter get that exception and nothing is cached, so the next call
  // tries again.
  template <class Factory>
  Pointer get_or_create(const Key& key, Factory&& factory) {
    if (std::optional<std::shared_future<Pointer>> pending = lookup(key)) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return pending->get();
    }
    std::promise<Pointer> promise;
    std::uint64_t flight = 0;
    {
      std::unique_lock lock(mutex_);
      if (auto found = entries_.find(key); found != entries_.end()) {
        std::shared_future<Pointer> pending = found->second.result;
        lock.unlock();
        hits_.fetch_add(1, std::memory_order_relaxed);
        return pending.get();
      }
      flight = ++flights_;
      entries_.emplace(key, Entry{promise.get_future().share(), flight});
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    try {
      Pointer value = make(std::forward<Factory>(factory));
      promise.set_value(value);
      return value;
    } catch (...) {
      forget(key, flight);
      promise.set_exception(std::current_exception());
      throw;
    }
  }

  // The value for `key` when it is cached and finished; nullptr when absent or still being made.
  // Never waits, never creates, and does not count as a hit or a miss.
  Pointer find(const Key& key) const {
    std::optional<std::shared_future<Pointer>> pending = lookup(key);
    if (!pending || pending->wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
      return nullptr;
    }
    return pending->get();
  }

  // The finished values, for a walk over the cache; values still being made are skipped.
  std::vector<Pointer> values() const {
    std::vector<Pointer> finished;
    std::shared_lock lock(mutex_);
    for (const auto& [key, entry] : entries_)
      if (entry.result.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
        try {
          finished.push_back(entry.result.get());
        } catch (...) {
          // A failed factory's entry is being removed by its caller; it has no value to give.
        }
      }
    return finished;
  }

  // Entries cached or in flight.
  std::size_t size() const {
    std::shared_lock lock(mutex_);
    return entries_.size();
  }

  // Forgets every entry. Factories in flight finish and hand their value to their waiters, but the
  // value is not cached. Counters are kept.
  void clear() {
    Map dropped;
    {
      std::unique_lock lock(mutex_);
      dropped.swap(entries_);
    }
    // `dropped` is destroyed here, outside the lock: a value's destructor may be slow (unloading a
    // module) and must not stall readers.
  }

  // Forgets the entries whose key satisfies `predicate`, as clear() does for all of them.
  template <class Predicate>
  void erase_if(Predicate predicate) {
    std::vector<Entry> dropped;
    {
      std::unique_lock lock(mutex_);
      for (auto entry = entries_.begin(); entry != entries_.end();) {
        if (predicate(entry->first)) {
          dropped.push_back(std::move(entry->second));
          entry = entries_.erase(entry);
        } else {
          ++entry;
        }
      }
    }
  }

  // Calls answered from the cache, including those that waited for another caller's factory.
  std::uint64_t hits() const noexcept { return hits_.load(std::memory_order_relaxed); }
  // Calls that ran the factory.
  std::uint64_t misses() const noexcept { return misses_.load(std::memory_order_relaxed); }

 private:
  struct Entry {
    std::shared_future<Pointer> result;
    std::uint64_t flight;  // identifies the call that created the entry, see forget()
  };
  using Map = std::unordered_map<Key, Entry, Hash>;

  std::optional<std::shared_future<Pointer>> lookup(const Key& key) const {
    std::shared_lock lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) return std::nullopt;
    return found->second.result;
  }

  template <class Factory>
  static Pointer make(Factory&& factory) {
    using Made = std::invoke_result_t<Factory>;
    if constexpr (std::is_convertible_v<Made, Pointer>) {
      return Pointer(std::forward<Factory>(factory)());
    } else {
      return std::make_shared<const Value>(std::forward<Factory>(factory)());
    }
  }

  // Removes the failed entry, unless clear() already dropped it and another call made a new one.
  void forget(const Key& key, std::uint64_t flight) {
    std::unique_lock lock(mutex_);
    auto found = entries_.find(key);
    if (found != entries_.end() && found->second.flight == flight) entries_.erase(found);
  }

  mutable std::shared_mutex mutex_;
  Map entries_;
  std::uint64_t flights_ = 0;  // guarded by mutex_
  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
};

}  // namespace ptxrt
