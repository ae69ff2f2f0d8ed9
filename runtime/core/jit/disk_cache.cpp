#include "ptxrt/core/disk_cache.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>

#include "jit/disk_cache_entry.hpp"
#include "jit/elapsed.hpp"
#include "jit/entry_lock.hpp"
#include "ptxrt/core/error.hpp"
#include "ptxrt/core/log.hpp"
#include "support/file_descriptor.hpp"
#include "support/private_folder.hpp"

namespace ptxrt {

namespace fs = std::filesystem;

namespace {

using detail::FileDescriptor;
using detail::OpenedFile;
using detail::PrivateFolder;

// How long load_or_compile waits for another process's compile of the same entry: more than any
// reasonable compile, less than forever for a holder that is stopped or hung.
constexpr std::chrono::milliseconds compile_patience = std::chrono::minutes(5);

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

// The file at a name, which a rename over the name changes; nullopt when there is none.
using FileIdentity = std::pair<dev_t, ino_t>;
std::optional<FileIdentity> identity_of(const std::optional<struct stat>& status) {
  if (!status) return std::nullopt;
  return FileIdentity{status->st_dev, status->st_ino};
}

std::string abbreviated(std::string_view key) { return std::string(key.substr(0, 12)) + "…"; }

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
      case 'K':
      case 'k':
        multiplier = std::uintmax_t{1} << 10;
        break;
      case 'M':
      case 'm':
        multiplier = std::uintmax_t{1} << 20;
        break;
      case 'G':
      case 'g':
        multiplier = std::uintmax_t{1} << 30;
        break;
      default:
        break;
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
    log::warn_once("PTXRT_CACHE_MAX_BYTES",
                   std::string("PTXRT_CACHE_MAX_BYTES: ") + error.what() + "; using 1G");
    return default_max_bytes_value;
  }
}

void DiskCache::validate_key(std::string_view key) {
  if (detail::is_hex_name(key, 64)) return;
  std::string shown(key.substr(0, 80));
  throw Error(ErrorKind::invalid_argument,
              "cache key '" + shown + (key.size() > shown.size() ? "…" : "") +
                  "' is not a SHA-256 digest (expected 64 lowercase hex digits, got " +
                  std::to_string(key.size()) + " characters)");
}

DiskCache::DiskCache(fs::path directory, std::uintmax_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {
  if (directory_.empty()) {
    give_up("disk cache: no directory is known (set PTXRT_CACHE_DIR or HOME)");
    return;
  }
  try {
    folder_ = std::make_unique<const PrivateFolder>(PrivateFolder::open(directory_, "disk cache"));
  } catch (const Error& error) {
    give_up(error.what());
  }
}

DiskCache::~DiskCache() = default;

fs::path DiskCache::entry_path(std::string_view key) const {
  validate_key(key);
  return directory_ / key.substr(0, 2) / detail::entry_file_name(key);
}

void DiskCache::give_up(std::string_view message) {
  if (usable_.exchange(false))
    log::write(log::Level::warning, std::string(message) + "; running without a disk cache");
}

void DiskCache::report_in_the_way(const std::string& message) {
  log::warn_once(message, message +
                              "; ignored and left in place (the cache deletes only what it "
                              "wrote; `ptxrt cache ls` lists it)");
}

std::optional<PrivateFolder> DiskCache::open_shard(std::string_view key, Shard access) {
  const std::string name(key.substr(0, 2));
  if (access == Shard::create && !folder_->make_folder(name)) {
    give_up("disk cache '" + folder_->path_of(name).string() +
            "': cannot create it: " + system_error_text());
    return std::nullopt;
  }
  try {
    return folder_->open_folder(name);
  } catch (const Error& error) {
    report_in_the_way(error.what());
    return std::nullopt;
  }
}

std::optional<Image> DiskCache::load(const std::string& key) {
  validate_key(key);
  const auto start = std::chrono::steady_clock::now();
  std::optional<PrivateFolder> shard;
  if (usable()) shard = open_shard(key, Shard::find);
  std::optional<Image> image = shard ? read_entry(*shard, key) : std::nullopt;
  if (image)
    count_hit(key, start);
  else
    count_miss(key);
  return image;
}

CachedImage DiskCache::load_or_compile(const std::string& key,
                                       const std::function<Image()>& compile) {
  validate_key(key);
  const auto start = std::chrono::steady_clock::now();
  std::optional<PrivateFolder> shard;
  if (usable()) shard = open_shard(key, Shard::create);
  if (!shard) {
    count_miss(key);
    return {compile(), true};
  }
  const std::string name = detail::entry_file_name(key);
  // Taken before the read, so that an entry stored after it shows as a change.
  const std::optional<FileIdentity> before_read = identity_of(shard->status_of(name));
  if (std::optional<Image> found = read_entry(*shard, key)) {
    count_hit(key, start);
    return {std::move(*found), false};
  }
  detail::EntryLock lock(*shard, detail::lock_file_name(key), compile_patience);
  if (!lock.failure().empty()) {
    log::warn_once(lock.failure(),
                   lock.failure() + "; compiling without waiting for other processes");
  } else if (identity_of(shard->status_of(name)) != before_read) {
    // Stored by the compile we waited for. Read again only on a change: an entry refused and
    // left in place (another user's) would be reported twice.
    if (std::optional<Image> found = read_entry(*shard, key)) {
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

std::optional<Image> DiskCache::read_entry(const PrivateFolder& shard, const std::string& key) {
  const std::string name = detail::entry_file_name(key);
  const std::string entry = "disk cache entry '" + shard.path_of(name).string() + "'";
  std::optional<OpenedFile> file;
  std::string bytes;
  try {
    const std::optional<struct stat> status = shard.status_of(name);
    if (!status) return std::nullopt;
    if (std::string problem = detail::unusable_file(*status, "a cache entry"); !problem.empty())
      throw Error(ErrorKind::io, entry + " " + problem);
    // Never through a link, never blocking on a FIFO put there since.
    file = shard.open_regular_file(name, "disk cache entry");
    if (!file) return std::nullopt;
    bytes = detail::read_opened_file(*file, shard.path_of(name), "disk cache entry",
                                     {.max_bytes = max_bytes_});
  } catch (const Error& error) {
    discarded_.fetch_add(1, std::memory_order_relaxed);
    report_in_the_way(error.what());
    return std::nullopt;
  }
  Image image;
  if (std::string problem = detail::decode_entry(bytes, key, image); !problem.empty()) {
    discard(shard, name, *file, bytes, entry + " is " + problem);
    return std::nullopt;
  }
  ::futimens(file->descriptor.get(), nullptr);  // marks it recently used, for eviction
  return image;
}

void DiskCache::discard(const PrivateFolder& shard, const std::string& name, const OpenedFile& file,
                        std::string_view bytes, const std::string& message) {
  discarded_.fetch_add(1, std::memory_order_relaxed);
  if (!detail::begins_like_entry(bytes.substr(0, detail::entry_signature_bytes))) {
    report_in_the_way(message);
    return;
  }
  // Only the file read: another process may have renamed a good entry over it since.
  const bool deleted = shard.remove_file_if(name, [&](const OpenedFile& now) {
    return now.status.st_ino == file.status.st_ino && now.status.st_dev == file.status.st_dev;
  });
  log::write(log::Level::warning, message + (deleted ? "; deleted" : "; ignored"));
}

void DiskCache::store(const Image& image) {
  validate_key(image.key);
  if (!usable()) return;
  if (std::optional<PrivateFolder> shard = open_shard(image.key, Shard::create))
    store_in(*shard, image);
}

void DiskCache::store_in(const PrivateFolder& shard, const Image& image) {
  const std::string name = detail::entry_file_name(image.key);
  const std::optional<struct stat> replaced = shard.status_of(name);
  if (replaced) {
    if (std::string problem = detail::not_written_by_cache(shard, name, *replaced);
        !problem.empty()) {
      report_in_the_way("disk cache entry '" + shard.path_of(name).string() + "' " + problem);
      return;
    }
  }
  const std::string bytes = detail::encode_entry(image);
  if (!write_entry(shard, name, bytes)) return;
  stores_.fetch_add(1, std::memory_order_relaxed);
  if (log::enabled(log::Level::debug)) {
    log::write(log::Level::debug, "disk cache stored " + abbreviated(image.key) + " (" +
                                      std::to_string(bytes.size()) + " bytes)");
  }
  account_store(bytes.size(), replaced ? static_cast<std::uintmax_t>(replaced->st_size) : 0);
}

bool DiskCache::write_entry(const PrivateFolder& shard, const std::string& name,
                            std::string_view bytes) {
  const std::string temporary = detail::temporary_file_name(detail::key_of_entry_file(name));
  FileDescriptor file = shard.open_file(temporary, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (!file) {
    give_up("disk cache '" + shard.path_of(temporary).string() +
            "': cannot create it: " + system_error_text());
    return false;
  }
  // fsync before rename: after a crash the name must not point at a file whose data never landed.
  bool written = write_all(file.get(), bytes) && ::fsync(file.get()) == 0;
  written = file.close() && written;
  if (written && shard.rename(temporary, name)) return true;
  const int error = errno;
  shard.remove_own_file(temporary);
  const std::string entry = "disk cache entry '" + shard.path_of(name).string() + "'";
  // A folder took the entry's name meanwhile: that entry alone is skipped.
  if (error == EISDIR || error == ENOTEMPTY || error == EEXIST)
    report_in_the_way(entry + " is a folder, not a cache entry");
  else
    give_up(entry + ": cannot write it: " + std::strerror(error));
  return false;
}

DiskCacheStats DiskCache::stats() const noexcept {
  return {hits_.load(std::memory_order_relaxed), misses_.load(std::memory_order_relaxed),
          stores_.load(std::memory_order_relaxed), evictions_.load(std::memory_order_relaxed),
          discarded_.load(std::memory_order_relaxed)};
}

}  // namespace ptxrt
