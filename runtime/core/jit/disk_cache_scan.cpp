// DiskCache's passes over its whole directory: keeping it under its bound, listing it (entries()
// and damaged()), and clear(). Every pass goes through the folders' descriptors and deletes only
// files the cache recognises as its own, by name and by content.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "jit/disk_cache_entry.hpp"
#include "jit/entry_lock.hpp"
#include "ptxrt/core/disk_cache.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "support/private_folder.hpp"

namespace ptxrt {

namespace fs = std::filesystem;

using detail::OpenedFile;
using detail::PrivateFolder;

namespace {

// How much of an entry a listing reads: its header, with the name and arch.
constexpr std::size_t listing_prefix_bytes = std::size_t{64} * 1024;
// A temporary file this old belongs to a store that died before its rename.
constexpr auto stale_temporary_age = std::chrono::hours(1);
// Other processes add entries we do not count; rescan now and then to notice them.
constexpr std::uint64_t stores_between_scans = 64;

void remove_leftover(const PrivateFolder& shard, const std::string& name) {
  if (detail::is_lock_file_name(name)) {
    detail::remove_if_unlocked(shard, name);
    return;
  }
  if (!detail::is_temporary_file_name(name)) return;
  const std::optional<struct stat> status = shard.status_of(name);
  if (status &&
      fs::file_time_type::clock::now() - detail::modification_time(*status) > stale_temporary_age)
    shard.remove_file_if(name, detail::holds_entry);
}

}  // namespace

// Entry files found by one pass over the directory, and what is in the way.
struct DiskCache::Scan {
  struct File {
    std::size_t shard;  // in `shards`
    std::string name;
    std::string key;
    std::uintmax_t size_bytes;
    fs::file_time_type last_use;
  };
  std::vector<PrivateFolder> shards;
  std::vector<File> files;
  std::vector<DiskCacheDamage> damaged;
  std::uintmax_t total_bytes = 0;

  void add_shard(PrivateFolder shard, Leftovers leftovers);
};

struct DiskCache::Listing {
  std::vector<DiskCacheEntry> entries;
  std::vector<DiskCacheDamage> damaged;
};

void DiskCache::Scan::add_shard(PrivateFolder shard, Leftovers leftovers) {
  for (std::string& name : shard.names()) {
    const std::string_view key = detail::key_of_entry_file(name);
    if (key.empty()) {
      if (leftovers == Leftovers::remove) remove_leftover(shard, name);
      continue;
    }
    const std::optional<struct stat> status = shard.status_of(name);
    if (!status) continue;  // evicted by another process meanwhile
    // Only the cache's own files count toward its bound: a file it may not evict would keep it
    // over the bound for good.
    if (std::string problem = detail::not_written_by_cache(shard, name, *status);
        !problem.empty()) {
      damaged.push_back({shard.path_of(name), std::move(problem)});
      continue;
    }
    const auto size = static_cast<std::uintmax_t>(status->st_size);
    files.push_back({shards.size(), std::move(name), std::string(key), size,
                     detail::modification_time(*status)});
    total_bytes += size;
  }
  shards.push_back(std::move(shard));
}

// Never throws for I/O: a name that vanishes mid-scan (another process evicting) is skipped.
DiskCache::Scan DiskCache::scan(Leftovers leftovers) const {
  Scan scan;
  if (!folder_) return scan;
  for (const std::string& name : folder_->names()) {
    if (!detail::is_hex_name(name, 2)) continue;
    const std::optional<struct stat> status = folder_->status_of(name);
    if (!status) continue;
    if (std::string problem = detail::untrusted_folder(*status); !problem.empty()) {
      scan.damaged.push_back({folder_->path_of(name), std::move(problem)});
      continue;
    }
    try {
      if (std::optional<PrivateFolder> shard = folder_->open_folder(name))
        scan.add_shard(std::move(*shard), leftovers);
    } catch (const Error&) {
      // Replaced since its status was read; the next scan sees what it is now.
    }
  }
  return scan;
}

void DiskCache::account_store(std::uintmax_t added_bytes, std::uintmax_t replaced_bytes) {
  {
    std::lock_guard lock(size_mutex_);
    if (estimated_bytes_ && ++stores_since_scan_ < stores_between_scans) {
      std::uintmax_t grown = *estimated_bytes_ + added_bytes;
      *estimated_bytes_ = grown - std::min(replaced_bytes, grown);
      if (*estimated_bytes_ <= max_bytes_) return;
    }
  }
  Scan found = scan(Leftovers::remove);
  {
    std::lock_guard lock(size_mutex_);
    estimated_bytes_ = found.total_bytes;
    stores_since_scan_ = 0;
  }
  if (found.total_bytes > max_bytes_) evict(std::move(found));
}

void DiskCache::evict(Scan scan) {
  // Down to 90% of the bound, so that the next few stores do not each trigger a scan.
  std::uintmax_t target = max_bytes_ - max_bytes_ / 10;
  std::sort(scan.files.begin(), scan.files.end(),
            [](const Scan::File& a, const Scan::File& b) { return a.last_use < b.last_use; });
  std::uintmax_t removed_bytes = 0;
  std::uint64_t removed = 0;
  for (const Scan::File& file : scan.files) {
    if (scan.total_bytes - removed_bytes <= target) break;
    if (scan.shards[file.shard].remove_file_if(file.name, detail::holds_entry)) {
      removed_bytes += file.size_bytes;
      ++removed;
    }
  }
  evictions_.fetch_add(removed, std::memory_order_relaxed);
  {
    std::lock_guard lock(size_mutex_);
    estimated_bytes_ = scan.total_bytes - removed_bytes;
  }
  if (log::enabled(log::Level::info)) {
    log::write(log::Level::info, "disk cache evicted " + std::to_string(removed) + " entries (" +
                                     std::to_string(removed_bytes) + " bytes) to stay under " +
                                     std::to_string(max_bytes_) + " bytes");
  }
}

DiskCache::Listing DiskCache::listing() const {
  Scan found = scan(Leftovers::keep);
  Listing listing{{}, std::move(found.damaged)};
  for (Scan::File& file : found.files) {
    const PrivateFolder& shard = found.shards[file.shard];
    Image header;
    std::string problem;
    try {
      const std::optional<OpenedFile> opened =
          shard.open_regular_file(file.name, "disk cache entry");
      if (!opened) continue;  // evicted by another process meanwhile
      problem = detail::decode_entry_header(
          detail::read_opened_prefix(*opened, listing_prefix_bytes), header);
    } catch (const Error&) {
      problem = "changed while it was listed";
    }
    if (!problem.empty()) {
      listing.damaged.push_back({shard.path_of(file.name), std::move(problem)});
      continue;
    }
    listing.entries.push_back({std::move(file.key), file.size_bytes, file.last_use,
                               std::move(header.name), std::move(header.arch)});
  }
  std::sort(
      listing.entries.begin(), listing.entries.end(),
      [](const DiskCacheEntry& a, const DiskCacheEntry& b) { return a.last_use > b.last_use; });
  return listing;
}

std::vector<DiskCacheEntry> DiskCache::entries() const { return listing().entries; }

std::vector<DiskCacheDamage> DiskCache::damaged() const { return listing().damaged; }

DiskCacheCleared DiskCache::clear() {
  DiskCacheCleared cleared;
  const Scan found = scan(Leftovers::remove);
  for (const Scan::File& file : found.files)
    if (found.shards[file.shard].remove_file_if(file.name, detail::holds_entry)) {
      ++cleared.entries;
      cleared.bytes += file.size_bytes;
    }
  std::lock_guard lock(size_mutex_);
  estimated_bytes_.reset();
  return cleared;
}

}  // namespace ptxrt
