// The bytes of one disk-cache entry file: an Image and its key, sealed with a SHA-256 checksum;
// and the names of the files the cache writes in a shard folder. Internal to the disk cache.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ptxrt/core/image.hpp"
#include "support/private_folder.hpp"
#include "support/regular_file.hpp"

namespace ptxrt::detail {

std::string encode_entry(const Image& image);

// How many bytes from a file's start begins_like_entry looks at.
inline constexpr std::size_t entry_signature_bytes = 8;
// Whether `prefix`, a file's first entry_signature_bytes (fewer when it is shorter), begins as
// every entry encode_entry writes does, or as one cut short: how the cache tells its own files
// from others' before deleting one.
bool begins_like_entry(std::string_view prefix);
// begins_like_entry of an opened file: an entry, or the temporary file of a store.
bool holds_entry(const OpenedFile& file);
// Why the file `name` in `shard`, whose own status is `status`, is not one the cache wrote (a
// FIFO, a folder or a link, another user's file, a file that is not an entry); empty when it is.
std::string not_written_by_cache(const PrivateFolder& shard, const std::string& name,
                                 const struct stat& status);

// The files of a shard folder: "<key>.ptxrt", an entry; "<key>.ptxrt.tmp.<pid>.<thread>.<n>", the
// temporary file of a store in progress (or of one that died); "<key>.lock", a compile's lock.
std::string entry_file_name(std::string_view key);
std::string temporary_file_name(std::string_view key);
std::string lock_file_name(std::string_view key);
// The key of an entry file's name; empty for any other name.
std::string_view key_of_entry_file(std::string_view name);
bool is_temporary_file_name(std::string_view name);
bool is_lock_file_name(std::string_view name);
// Whether `text` is `length` lowercase hex digits: a key (64), a shard folder's name (2).
bool is_hex_name(std::string_view text, std::size_t length);

// Fills `image` from `bytes` and returns an empty string, or returns what is wrong ("truncated",
// "corrupt or truncated (checksum mismatch)", "foreign (...)", ...) when `bytes` is not a whole,
// intact entry stored under `key`.
std::string decode_entry(std::string_view bytes, const std::string& key, Image& image);

// Reads only key, format, arch and name from the start of an entry, without verifying the
// checksum: enough for a listing. Returns what is wrong, or empty.
std::string decode_entry_header(std::string_view prefix, Image& image);

}  // namespace ptxrt::detail
