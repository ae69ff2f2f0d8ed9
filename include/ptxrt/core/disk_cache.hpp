// Compiled images kept on disk between processes, so that a kernel already compiled by an earlier
// run loads in about a millisecond instead of taking NVRTC's hundreds.
//
// Layout: <directory>/<key[0:2]>/<key>.ptxrt, one file per image, written to a temporary file and
// renamed over, so readers see a whole entry or none. Every entry carries a SHA-256 checksum and
// its own key; anything corrupt, truncated, foreign or owned by another user is never returned.
// The cache is an optimisation: I/O failures are logged (once) and the cache runs without disk,
// never throwing from load() or store().
//
// The directory and its shard folders are this user's alone: created with mode 0700, and an
// existing one that is a symbolic link, another user's, or writable by group or others is refused
// (for the directory, the cache runs without disk; for a shard folder, its entries are skipped)
// and never written. They are opened once and used through their descriptors, never through a
// link. Only regular files are read as entries, without ever blocking on a FIFO, and the cache
// deletes only files it wrote, recognised by name and content: anything else in the directory (a
// FIFO, a folder or a link where an entry should be, a file it did not write) is left alone and
// reported by damaged().
//
// While load_or_compile() compiles an entry, <key>.lock beside it (0600, empty) is flock'ed, so
// that other processes wanting the same entry wait for it instead of compiling it too. Its holder
// deletes it when done; one left by a process that died (the kernel released its lock) goes with
// the next compile of that key, the next eviction scan or clear(). So lock files exist only for
// compiles in progress or interrupted, never one per entry.
//
// Thread and process safety: every member may be called from any thread, and any number of
// processes may share one directory.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ptxrt/core/image.hpp"
#include "ptxrt/export.hpp"

namespace ptxrt {

namespace detail {
class PrivateFolder;
struct OpenedFile;
}  // namespace detail

// One entry as listed by DiskCache::entries(), read from the entry's header (not verified).
struct PTXRT_API DiskCacheEntry {
  std::string key;
  std::uintmax_t size_bytes = 0;             // of the file, header included
  std::filesystem::file_time_type last_use;  // the file's mtime: set on store, touched on hit
  std::string name;
  std::string arch;
};

// A path in the cache directory holding what the cache did not write where it expects an entry
// or a shard folder (see damaged()).
struct PTXRT_API DiskCacheDamage {
  std::filesystem::path path;
  std::string problem;  // "is a FIFO, not a cache entry", "is not a ptxrt cache entry (bad magic)"
};

// What DiskCache::clear() deleted.
struct PTXRT_API DiskCacheCleared {
  std::uint64_t entries = 0;
  std::uintmax_t bytes = 0;
};

// Counters of this DiskCache object since construction.
struct PTXRT_API DiskCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t stores = 0;
  std::uint64_t evictions = 0;
  std::uint64_t discarded = 0;  // corrupt, truncated or foreign entries refused by load()
};

// What DiskCache::load_or_compile found or made.
struct PTXRT_API CachedImage {
  Image image;
  // False when the entry was in the cache, perhaps stored by another process while this one
  // waited for its compile.
  bool compiled = false;
};

class PTXRT_API DiskCache {
 public:
  static constexpr std::uintmax_t default_max_bytes_value = std::uintmax_t{1} << 30;

  // $PTXRT_CACHE_DIR, else $XDG_CACHE_HOME/ptxrt, else ~/.cache/ptxrt. Empty when none is known.
  static std::filesystem::path default_directory();
  // $PTXRT_CACHE_MAX_BYTES ("1073741824", "512M", "2G"), else 1 GiB. An unreadable value is
  // reported once and the default used.
  static std::uintmax_t default_max_bytes();
  // Bytes with an optional K, M or G suffix (powers of 1024). Throws Error(invalid_argument).
  static std::uintmax_t parse_size(std::string_view text);
  // Throws Error(invalid_argument) unless `key` is exactly 64 lowercase hex digits (a SHA-256),
  // which also keeps it from naming any path outside the cache.
  static void validate_key(std::string_view key);

  // Creates `directory` (mode 0700, its parents as needed) when missing. A directory that cannot
  // be created, is a symbolic link, is owned by another user or is writable by group or others
  // is reported once and the cache runs without disk, writing nothing there.
  explicit DiskCache(std::filesystem::path directory = default_directory(),
                     std::uintmax_t max_bytes = default_max_bytes());
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  const std::filesystem::path& directory() const noexcept { return directory_; }
  std::uintmax_t max_bytes() const noexcept { return max_bytes_; }
  // False once the cache gave up on its directory; load() then misses and store() does nothing.
  bool usable() const noexcept { return usable_.load(std::memory_order_relaxed); }
  // Where the entry for `key` lives (validates the key).
  std::filesystem::path entry_path(std::string_view key) const;

  // The image stored under `key`, or nullopt. An entry that fails any check is reported as a
  // warning, and deleted when the cache wrote it. Entries larger than max_bytes() are not read.
  // A hit marks the entry as recently used.
  std::optional<Image> load(const std::string& key);
  // Stores `image` under image.key (validated), replacing the entry there, then evicts the least
  // recently used entries if the cache exceeds max_bytes(). Where something the cache did not
  // write is in the way, the image is not stored (said once).
  void store(const Image& image);
  // The image stored under `key`, or the one `compile` returns for it, stored. Single flight
  // across processes: of the callers missing `key` at once (threads included), one compiles
  // while the others wait for its entry (up to 5 minutes, then they compile too; a stopped
  // process cannot hold them forever). Exceptions from `compile` propagate, storing nothing; a
  // waiter then compiles in its turn. Counts one hit or one miss in stats().
  CachedImage load_or_compile(const std::string& key, const std::function<Image()>& compile);

  // Every entry in the directory, most recently used first.
  std::vector<DiskCacheEntry> entries() const;
  // What is in the way in the directory: where an entry or a shard folder should be, something
  // the cache did not write (a FIFO, a folder, a link, another user's file, a file that is not an
  // entry). The cache skips those entries and never deletes what it did not write: this lists
  // them for their owner (`ptxrt cache ls`).
  std::vector<DiskCacheDamage> damaged() const;
  // Deletes every entry, and the lock files of compiles that died. Temporary files of stores in
  // progress, the locks of compiles in progress, and every file the cache did not write stay.
  DiskCacheCleared clear();
  DiskCacheStats stats() const noexcept;

 private:
  struct Scan;
  struct Listing;
  enum class Shard { find, create };
  // What interrupted work leaves: the temporary files of stores (once stale), the lock files of
  // compiles (once no one holds them).
  enum class Leftovers { keep, remove };

  std::optional<detail::PrivateFolder> open_shard(std::string_view key, Shard access);
  std::optional<Image> read_entry(const detail::PrivateFolder& shard, const std::string& key);
  void count_hit(const std::string& key, std::chrono::steady_clock::time_point start);
  void count_miss(const std::string& key);
  void discard(const detail::PrivateFolder& shard, const std::string& name,
               const detail::OpenedFile& file, std::string_view bytes, const std::string& message);
  void store_in(const detail::PrivateFolder& shard, const Image& image);
  bool write_entry(const detail::PrivateFolder& shard, const std::string& name,
                   std::string_view bytes);
  void account_store(std::uintmax_t added_bytes, std::uintmax_t replaced_bytes);
  Scan scan(Leftovers leftovers) const;
  Listing listing() const;
  void evict(Scan scan);
  void give_up(std::string_view message);
  void report_in_the_way(const std::string& message);

  std::filesystem::path directory_;
  std::unique_ptr<const detail::PrivateFolder> folder_;  // null when refused
  std::uintmax_t max_bytes_;
  std::atomic<bool> usable_{true};

  std::mutex size_mutex_;
  std::optional<std::uintmax_t> estimated_bytes_;  // guarded by size_mutex_; nullopt: scan
  std::uint64_t stores_since_scan_ = 0;            // guarded by size_mutex_

  std::atomic<std::uint64_t> hits_{0};
  std::atomic<std::uint64_t> misses_{0};
  std::atomic<std::uint64_t> stores_{0};
  std::atomic<std::uint64_t> evictions_{0};
  std::atomic<std::uint64_t> discarded_{0};
};

}  // namespace ptxrt
