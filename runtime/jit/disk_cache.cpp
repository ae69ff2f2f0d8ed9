#include "ptxrt/disk_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>

#include "jit/disk_cache_entry.hpp"
#include "jit/elapsed.hpp"
#include "jit/entry_lock.hpp"
#include "support/file_descriptor.hpp"
#include "ptxrt/error.hpp"
#include "ptxrt/log.hpp"

namespace ptxrt {

namespace fs = std::filesystem;

namespace {

using detail::FileDescriptor;

constexpr std::size_t listing_prefix_bytes = 64 * 1024;
constexpr std::string_view entry_suffix = ".ptxrt";
constexpr std::string_view temporary_marker = ".ptxrt.tmp.";
constexpr std::string_view lock_suffix = ".lock";
// How long load_or_compile waits for another process's compile of the same entry: more than any
// reasonable compile, less than forever for a holder that is stopped or hung.
constexpr std::chrono::milliseconds compile_patience = std::chrono::minutes(5);
// A temporary file this old belongs to a store that died before its rename.
constexpr auto stale_temporary_age = std::chrono::hours(1);
// Other processes add entries we do not count; rescan now and then to notice them.
constexpr std::uint64_t stores_between_scans = 64;

bool read_exactly(int descriptor, std::string& bytes, std::size_t size) {
  bytes.resize(size);
  std::size_t done = 0;
  while (done < size) {
    ssize_t count = ::read(descriptor, bytes.data() + done, size - done);
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    done += static_cast<std::size_t>(count);
  }
  return true;
}

bool write_all(int descriptor, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t count = ::write(descriptor, bytes.data(), bytes.size());
    if (count < 0 && errno == EINTR) continue;
    if (count <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(count));
  }
  return true;
}

std::string system_error_text() { return std::strerror(errno); }

// The file a path names, which a rename over the path changes; nullopt when there is none.
using FileIdentity = std::pair<dev_t, ino_t>;
std::optional<FileIdentity> file_identity(const fs::path& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return std::nullopt;
  return FileIdentity{info.st_dev, info.st_ino};
}

std::string abbreviated(std::string_view key) { return std::string(key.substr(0, 12)) + "…"; }

bool is_hex_name(std::string_view name, std::size_t length) {
  return name.size() == length && std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The key when `name` is "<64 hex>.ptxrt", else empty.
std::string_view entry_key(std::string_view name) {
  if (name.size() != 64 + entry_suffix.size() || !name.ends_with(entry_suffix)) return {};
  std::string_view key = name.substr(0, 64);
  return is_hex_name(key, 64) ? key : std::string_view{};
}

std::string temporary_name(std::string_view key) {
  static std::atomic<std::uint64_t> counter{0};
  return std::string(key) + std::string(temporary_marker) + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

std::string home_directory() {
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') return home;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return {};
  }
  return found->pw_dir;
}

}  // namespace

struct DiskCache::Scan {
  struct File {
    fs::path path;
    std::string key;
    std::uintmax_t size_bytes;
    fs::file_time_type last_use;
  };
  std::vector<File> files;
  std::uintmax_t total_bytes = 0;
};

namespace {

// What interrupted work leaves: the temporary files of stores (once stale), the lock files of
// compiles (once no one holds them).
enum class Leftovers { keep, remove };

void remove_if_stale(const fs::directory_entry& file) {
  std::error_code error;
  fs::file_time_type modified = file.last_write_time(error);
  if (!error && fs::file_time_type::clock::now() - modified > stale_temporary_age) {
    fs::remove(file.path(), error);
  }
}

bool is_lock_name(std::string_view name) {
  return name.size() == 64 + lock_suffix.size() && name.ends_with(lock_suffix) &&
         is_hex_name(name.substr(0, 64), 64);
}

void scan_shard(const fs::path& shard, Leftovers leftovers, DiskCache::Scan& scan) {
  std::error_code error;
  for (fs::directory_iterator it(shard, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    std::string_view key = entry_key(name);
    if (key.empty()) {
      if (leftovers == Leftovers::keep) continue;
      if (name.find(temporary_marker) != std::string::npos) remove_if_stale(*it);
      if (is_lock_name(name)) detail::remove_if_unlocked(it->path());
      continue;
    }
    std::error_code file_error;
    std::uintmax_t size = it->file_size(file_error);
    fs::file_time_type last_use = it->last_write_time(file_error);
    if (file_error) continue;
    scan.files.push_back({it->path(), std::string(key), size, last_use});
    scan.total_bytes += size;
  }
}

// Every entry file under `directory`, optionally deleting leftovers on the way. Never throws for
// I/O: files that vanish mid-scan (another process evicting) are skipped.
DiskCache::Scan scan_directory(const fs::path& directory, Leftovers leftovers) {
  DiskCache::Scan scan;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end;
       it.increment(error)) {
    if (is_hex_name(it->path().filename().string(), 2)) scan_shard(it->path(), leftovers, scan);
  }
  return scan;
}

}  // namespace

fs::path DiskCache::default_directory() {
  if (const char* dir = std::getenv("PTXRT_CACHE_DIR"); dir != nullptr && *dir != '\0') return dir;
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    return fs::path(xdg) / "ptxrt";
  }
  std::string home = home_directory();
  if (home.empty()) return {};
  return fs::path(home) / ".cache" / "ptxrt";
}

std::uintmax_t DiskCache::parse_size(std::string_view text) {
  auto fail = [&] {
    throw Error(ErrorKind::invalid_argument,
                "cache size '" + std::string(text) +
                    "' is not a byte count (expected digits with an optional K, M or G suffix, "
                    "e.g. 536870912 or 512M)");
  };
  std::uintmax_t multiplier = 1;
  std::string_view digits = text;
  if (!digits.empty()) {
    switch (digits.back()) {
      case 'K': case 'k': multiplier = std::uintmax_t{1} << 10; break;
      case 'M': case 'm': multiplier = std::uintmax_t{1} << 20; break;
      case 'G': case 'g': multiplier = std::uintmax_t{1} << 30; break;
      default: break;
    }
    if (multiplier != 1) digits.remove_suffix(1);
  }
  std::uintmax_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) fail();
  if (value > UINTMAX_MAX / multiplier) fail();
  return value * multiplier;
}

std::uintmax_t DiskCache::default_max_bytes() {
  const char* text = std::getenv("PTXRT_CACHE_MAX_BYTES");
  if (text == nullptr || *text == '\0') return default_max_bytes_value;
  try {
    return parse_size(text);
  } catch (const Error& error) {
    log::warn_once("PTXRT_CACHE_MAX_BYTES", std::string("PTXRT_CACHE_MAX_BYTES: ") + error.what() +
                                                "; using 1G");
    return default_max_bytes_value;
  }
}

void DiskCache::validate_key(std::string_view key) {
  if (is_hex_name(key, 64)) return;
  std::string shown(key.substr(0, 80));
  throw Error(ErrorKind::invalid_argument,
              "cache key '" + shown + (key.size() > shown.size() ? "…" : "") +
                  "' is not a SHA-256 digest (expected 64 lowercase hex digits, got " +
                  std::to_string(key.size()) + " characters)");
}

std::string DiskCache::prepare_private_directory(const fs::path& directory) {
  if (directory.empty()) return "no cache directory is known (set PTXRT_CACHE_DIR or HOME)";
  std::error_code error;
  if (directory.has_parent_path()) fs::create_directories(directory.parent_path(), error);
  if (::mkdir(directory.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create it: " + system_error_text();
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) return "cannot inspect it: " + system_error_text();
  if (!S_ISDIR(info.st_mode)) return "it is not a directory";
  if (info.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return std::string("it is writable by group or others (mode ") + mode +
           "), so another user could plant entries; chmod 700 it";
  }
  return {};
}

DiskCache::DiskCache(fs::path directory, std::uintmax_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {
  if (std::string problem = prepare_private_directory(directory_); !problem.empty())
    give_up(problem);
}

fs::path DiskCache::entry_path(std::string_view key) const {
  validate_key(key);
  return directory_ / key.substr(0, 2) / (std::string(key) + std::string(entry_suffix));
}

void DiskCache::give_up(std::string_view reason) {
  if (usable_.exchange(false)) {
    log::write(log::Level::warning, "disk cache '" + directory_.string() + "': " +
                                        std::string(reason) + "; running without a disk cache");
  }
}

std::optional<Image> DiskCache::load(const std::string& key) {
  fs::path path = entry_path(key);
  if (!usable()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  }
  auto start = std::chrono::steady_clock::now();
  std::optional<Image> image = read_entry(key, path);
  if (image)
    count_hit(key, start);
  else
    count_miss(key);
  return image;
}

CachedImage DiskCache::load_or_compile(const std::string& key,
                                       const std::function<Image()>& compile) {
  const fs::path path = entry_path(key);
  const auto start = std::chrono::steady_clock::now();
  if (!usable()) {
    count_miss(key);
    return {compile(), true};
  }
  // Taken before the read, so that an entry stored after it shows as a change.
  const std::optional<FileIdentity> before_read = file_identity(path);
  if (std::optional<Image> found = read_entry(key, path)) {
    count_hit(key, start);
    return {std::move(*found), false};
  }
  if (!make_shard(path.parent_path())) {
    count_miss(key);
    return {compile(), true};
  }
  detail::EntryLock lock(path.parent_path() / (key + std::string(lock_suffix)), compile_patience);
  if (!lock.failure().empty()) {
    log::warn_once(lock.failure(), "disk cache '" + directory_.string() + "': " + lock.failure() +
                                       "; compiling without waiting for other processes");
  } else if (file_identity(path) != before_read) {
    // Stored by the compile we waited for. Read again only on a change: an entry refused and
    // left in place (another user's) would be reported twice.
    if (std::optional<Image> found = read_entry(key, path)) {
      count_hit(key, start);
      return {std::move(*found), false};
    }
  }
  count_miss(key);
  Image compiled = compile();
  store(compiled);  // before the lock goes, so that its next holder finds the entry
  return {std::move(compiled), true};
}

void DiskCache::count_hit(const std::string& key, std::chrono::steady_clock::time_point start) {
  hits_.fetch_add(1, std::memory_order_relaxed);
  if (log::enabled(log::Level::debug)) {
    log::write(log::Level::debug, "disk cache hit " + abbreviated(key) + " (" +
                                      detail::milliseconds_since(start) + ")");
  }
}

void DiskCache::count_miss(const std::string& key) {
  misses_.fetch_add(1, std::memory_order_relaxed);
  if (log::enabled(log::Level::debug)) {
    log::write(log::Level::debug, "disk cache miss " + abbreviated(key));
  }
}

std::optional<Image> DiskCache::read_entry(const std::string& key, const fs::path& path) {
  // O_NOFOLLOW: an entry is never a symlink, and following one could read any file.
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!file) {
    if (errno != ENOENT) {
      log::write(log::Level::warning,
                 "cannot read disk cache entry '" + path.string() + "': " + system_error_text());
    }
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(file.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid()) {
    discarded_.fetch_add(1, std::memory_order_relaxed);
    log::write(log::Level::warning, "disk cache entry '" + path.string() +
                                        "' is not a regular file owned by this user; ignored");
    return std::nullopt;
  }
  std::string bytes;
  Image image;
  std::string problem = "truncated while reading";
  if (read_exactly(file.get(), bytes, static_cast<std::size_t>(info.st_size))) {
    problem = detail::decode_entry(bytes, key, image);
  }
  if (!problem.empty()) {
    discard(path, file.get(), problem);
    return std::nullopt;
  }
  ::futimens(file.get(), nullptr);  // marks it recently used, for eviction
  return image;
}

void DiskCache::discard(const fs::path& path, int descriptor, std::string_view reason) {
  discarded_.fetch_add(1, std::memory_order_relaxed);
  // Delete only the file we read: another process may have renamed a good entry over it since.
  struct stat opened {};
  struct stat current {};
  bool same = ::fstat(descriptor, &opened) == 0 && ::stat(path.c_str(), &current) == 0 &&
              opened.st_ino == current.st_ino && opened.st_dev == current.st_dev;
  if (same) ::unlink(path.c_str());
  log::write(log::Level::warning, "disk cache entry '" + path.string() + "' is " +
                                      std::string(reason) + (same ? "; deleted" : "; ignored"));
}

void DiskCache::store(const Image& image) {
  fs::path path = entry_path(image.key);
  if (!usable()) return;
  std::string bytes = detail::encode_entry(image);
  std::error_code error;
  std::uintmax_t replaced = fs::file_size(path, error);
  if (error) replaced = 0;
  if (!write_entry(path, bytes)) return;
  stores_.fetch_add(1, std::memory_order_relaxed);
  if (log::enabled(log::Level::debug)) {
    log::write(log::Level::debug, "disk cache stored " + abbreviated(image.key) + " (" +
                                      std::to_string(bytes.size()) + " bytes)");
  }
  account_store(bytes.size(), replaced);
}

bool DiskCache::make_shard(const fs::path& shard) {
  if (::mkdir(shard.c_str(), 0700) == 0 || errno == EEXIST) return true;
  give_up("cannot create '" + shard.string() + "': " + system_error_text());
  return false;
}

bool DiskCache::write_entry(const fs::path& path, std::string_view bytes) {
  fs::path shard = path.parent_path();
  if (!make_shard(shard)) return false;
  fs::path temporary = shard / temporary_name(path.stem().string());
  FileDescriptor file(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!file) {
    give_up("cannot create '" + temporary.string() + "': " + system_error_text());
    return false;
  }
  // fsync before rename: after a crash the name must not point at a file whose data never landed.
  bool written = write_all(file.get(), bytes) && ::fsync(file.get()) == 0;
  written = file.close() && written;
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = system_error_text();
    ::unlink(temporary.c_str());
    give_up("cannot write '" + path.string() + "': " + reason);
    return false;
  }
  return true;
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
  Scan scan = scan_directory(directory_, Leftovers::remove);
  {
    std::lock_guard lock(size_mutex_);
    estimated_bytes_ = scan.total_bytes;
    stores_since_scan_ = 0;
  }
  if (scan.total_bytes > max_bytes_) evict(std::move(scan));
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
    std::error_code error;
    if (fs::remove(file.path, error)) {
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

std::vector<DiskCacheEntry> DiskCache::entries() const {
  std::vector<DiskCacheEntry> listed;
  for (Scan::File& file : scan_directory(directory_, Leftovers::keep).files) {
    DiskCacheEntry entry{std::move(file.key), file.size_bytes, file.last_use, {}, {}};
    FileDescriptor descriptor(::open(file.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    std::string prefix;
    std::size_t size = std::min<std::uintmax_t>(file.size_bytes, listing_prefix_bytes);
    if (descriptor && read_exactly(descriptor.get(), prefix, size)) {
      Image header;
      if (detail::decode_entry_header(prefix, header).empty()) {
        entry.name = std::move(header.name);
        entry.arch = std::move(header.arch);
      }
    }
    listed.push_back(std::move(entry));
  }
  std::sort(listed.begin(), listed.end(), [](const DiskCacheEntry& a, const DiskCacheEntry& b) {
    return a.last_use > b.last_use;
  });
  return listed;
}

void DiskCache::clear() {
  for (const Scan::File& file : scan_directory(directory_, Leftovers::remove).files) {
    std::error_code error;
    fs::remove(file.path, error);
  }
  std::lock_guard lock(size_mutex_);
  estimated_bytes_.reset();
}

DiskCacheStats DiskCache::stats() const noexcept {
  return {hits_.load(std::memory_order_relaxed), misses_.load(std::memory_order_relaxed),
          stores_.load(std::memory_order_relaxed), evictions_.load(std::memory_order_relaxed),
          discarded_.load(std::memory_order_relaxed)};
}

}  // namespace ptxrt
