#include "jit/disk_cache_entry.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <functional>
#include <thread>

#include "jit/hash.hpp"
#include "ptxrt/core/error.hpp"

namespace ptxrt::detail {

namespace {

// Entry file: magic, format version, the Image's fields length-prefixed in a fixed order (bytes
// exactly as given: NVRTC logs and options need not be UTF-8, so not JSON), then the SHA-256 of
// everything before it. key, format, arch and name come first so that listing reads only a prefix.
constexpr std::string_view entry_magic = "PTXRTIMG";
static_assert(entry_magic.size() == entry_signature_bytes);
constexpr std::size_t key_digits = 64;
constexpr std::string_view entry_suffix = ".ptxrt";
constexpr std::string_view temporary_marker = ".ptxrt.tmp.";
constexpr std::string_view lock_suffix = ".lock";
constexpr std::uint32_t entry_version = 1;
constexpr std::size_t checksum_bytes = 32;

class Writer {
 public:
  void integer(std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out_ += static_cast<char>((value >> (8 * i)) & 0xff);
  }
  void text(std::string_view value) {
    integer(value.size(), 8);
    out_ += value;
  }
  void raw(std::string_view value) { out_ += value; }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Reads the fields back; every read checks the bounds, and a failed read sets `failed` for good.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  std::uint64_t integer(int bytes) {
    if (!take(static_cast<std::size_t>(bytes))) return 0;
    std::uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= std::uint64_t{static_cast<unsigned char>(taken_[static_cast<std::size_t>(i)])}
               << (8 * i);
    }
    return value;
  }
  std::string text() {
    std::uint64_t size = integer(8);
    if (failed || size > rest_.size() || !take(static_cast<std::size_t>(size))) return {};
    return std::string(taken_);
  }
  // A count of items that each take at least 8 bytes, so a corrupt count cannot reserve gigabytes.
  std::size_t count() {
    std::uint64_t value = integer(8);
    if (value > rest_.size() / 8) failed = true;
    return failed ? 0 : static_cast<std::size_t>(value);
  }
  std::string_view raw(std::size_t size) { return take(size) ? taken_ : std::string_view{}; }
  std::size_t remaining() const { return rest_.size(); }
  bool failed = false;

 private:
  bool take(std::size_t size) {
    if (failed || size > rest_.size()) {
      failed = true;
      return false;
    }
    taken_ = rest_.substr(0, size);
    rest_.remove_prefix(size);
    return true;
  }
  std::string_view rest_;
  std::string_view taken_;
};

}  // namespace

std::string encode_entry(const Image& image) {
  Writer out;
  out.raw(entry_magic);
  out.integer(entry_version, 4);
  out.text(image.key);
  out.integer(static_cast<std::uint64_t>(image.format), 4);
  out.text(image.arch);
  out.text(image.name);
  out.integer(static_cast<std::uint32_t>(image.nvrtc_version), 4);
  out.integer(image.defines.size(), 8);
  for (const Define& define : image.defines) {
    out.text(define.name);
    out.text(define.value);
  }
  out.integer(image.options.size(), 8);
  for (const std::string& option : image.options) out.text(option);
  out.integer(image.lowered_names.size(), 8);
  for (const auto& [expression, lowered] : image.lowered_names) {
    out.text(expression);
    out.text(lowered);
  }
  out.text(image.compile_log);
  out.text(image.data);
  std::array<std::uint8_t, 32> checksum = Sha256().update(out.bytes()).digest();
  out.raw(std::string_view(reinterpret_cast<const char*>(checksum.data()), checksum.size()));
  return std::move(out.bytes());
}

bool begins_like_entry(std::string_view prefix) {
  return prefix.size() <= entry_magic.size() && entry_magic.starts_with(prefix);
}

bool holds_entry(const OpenedFile& file) {
  return begins_like_entry(read_opened_prefix(file, entry_signature_bytes));
}

std::string not_written_by_cache(const PrivateFolder& shard, const std::string& name,
                                 const struct stat& status) {
  if (std::string problem = unusable_file(status, "a cache entry"); !problem.empty())
    return problem;
  try {
    const std::optional<OpenedFile> file = shard.open_regular_file(name, "disk cache entry");
    if (file && !holds_entry(*file)) return "is not a ptxrt cache entry";
  } catch (const Error&) {
    return "changed while it was checked";
  }
  return {};
}

bool is_hex_name(std::string_view text, std::size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string entry_file_name(std::string_view key) {
  return std::string(key) + std::string(entry_suffix);
}

std::string temporary_file_name(std::string_view key) {
  static std::atomic<std::uint64_t> counter{0};
  return std::string(key) + std::string(temporary_marker) + std::to_string(::getpid()) + "." +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

std::string lock_file_name(std::string_view key) {
  return std::string(key) + std::string(lock_suffix);
}

std::string_view key_of_entry_file(std::string_view name) {
  if (name.size() != key_digits + entry_suffix.size() || !name.ends_with(entry_suffix)) return {};
  const std::string_view key = name.substr(0, key_digits);
  return is_hex_name(key, key_digits) ? key : std::string_view{};
}

bool is_temporary_file_name(std::string_view name) {
  return is_hex_name(name.substr(0, key_digits), key_digits) &&
         name.substr(key_digits).starts_with(temporary_marker);
}

bool is_lock_file_name(std::string_view name) {
  return name.size() == key_digits + lock_suffix.size() && name.ends_with(lock_suffix) &&
         is_hex_name(name.substr(0, key_digits), key_digits);
}

// Reads magic, version, key, format, arch and name; returns what is wrong, or empty when fine.
namespace {

std::string decode_header(Reader& in, Image& image) {
  if (in.raw(entry_magic.size()) != entry_magic) return "not a ptxrt cache entry (bad magic)";
  if (std::uint64_t version = in.integer(4); version != entry_version) {
    return in.failed ? "truncated"
                     : "entry format version " + std::to_string(version) + ", expected " +
                           std::to_string(entry_version);
  }
  image.key = in.text();
  std::uint64_t format = in.integer(4);
  if (format > static_cast<std::uint64_t>(ImageFormat::ltoir)) return "corrupt (image format)";
  image.format = static_cast<ImageFormat>(format);
  image.arch = in.text();
  image.name = in.text();
  return in.failed ? "truncated" : "";
}

std::string decode_body(Reader& in, Image& image) {
  image.nvrtc_version = static_cast<int>(static_cast<std::uint32_t>(in.integer(4)));
  image.defines.resize(in.count());
  for (Define& define : image.defines) {
    define.name = in.text();
    define.value = in.text();
  }
  image.options.resize(in.count());
  for (std::string& option : image.options) option = in.text();
  image.lowered_names.resize(in.count());
  for (auto& [expression, lowered] : image.lowered_names) {
    expression = in.text();
    lowered = in.text();
  }
  image.compile_log = in.text();
  image.data = in.text();
  if (in.failed) return "truncated";
  return in.remaining() == 0 ? "" : "corrupt (trailing bytes)";
}

}  // namespace

// The checksum is tested first: a damaged entry is reported as such, not as whatever field the
// damage happened to land in.
std::string decode_entry(std::string_view bytes, const std::string& key, Image& image) {
  if (bytes.size() < entry_magic.size() + checksum_bytes) return "truncated";
  if (bytes.substr(0, entry_magic.size()) != entry_magic) return "not a ptxrt cache entry";
  std::string_view body = bytes.substr(0, bytes.size() - checksum_bytes);
  std::array<std::uint8_t, 32> expected = Sha256().update(body).digest();
  if (std::memcmp(expected.data(), bytes.data() + body.size(), checksum_bytes) != 0) {
    return "corrupt or truncated (checksum mismatch)";
  }
  Reader in(body);
  if (std::string problem = decode_header(in, image); !problem.empty()) return problem;
  if (image.key != key) return "foreign (it holds key " + image.key + ")";
  return decode_body(in, image);
}

std::string decode_entry_header(std::string_view prefix, Image& image) {
  Reader in(prefix);
  return decode_header(in, image);
}

}  // namespace ptxrt::detail
