// SHA-256, for cache keys (collision-free in practice, and safe as a file name once in hex) and for
// the integrity checksum of disk-cache entries.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "ptxrt/export.hpp"

namespace ptxrt {

class PTXRT_API Sha256 {
 public:
  Sha256();
  Sha256& update(std::string_view bytes);
  // Feeds a length prefix before the bytes, so that ("ab","c") and ("a","bc") hash differently.
  Sha256& update_field(std::string_view bytes);
  std::array<std::uint8_t, 32> digest();  // finishes; the object must not be updated afterwards
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

PTXRT_API std::string sha256_hex(std::string_view bytes);

}  // namespace ptxrt
