// The bytes of one disk-cache entry file: an Image and its key, sealed with a SHA-256 checksum.
// Internal to the disk cache.
#pragma once

#include <string>
#include <string_view>

#include "ptxrt/image.hpp"

namespace ptxrt::detail {

std::string encode_entry(const Image& image);

// Fills `image` from `bytes` and returns an empty string, or returns what is wrong ("truncated",
// "corrupt or truncated (checksum mismatch)", "foreign (...)", ...) when `bytes` is not a whole,
// intact entry stored under `key`.
std::string decode_entry(std::string_view bytes, const std::string& key, Image& image);

// Reads only key, format, arch and name from the start of an entry, without verifying the
// checksum: enough for a listing. Returns what is wrong, or empty.
std::string decode_entry_header(std::string_view prefix, Image& image);

}  // namespace ptxrt::detail
